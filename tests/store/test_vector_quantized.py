"""Quantized vector search: sign-bit coarse ranking, exact rescoring, filters and freshness."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memdir.errors import StoreError
from memdir.store import EmbedderIdentity, FileStamp, FileWrite, SqliteStore, Unit
from memdir.store.sqlite.vectors.codec import hamming, nearest_rows, pack_signs
from memdir.store.sqlite.vectors.matrix import RESCORE_MIN, UnitMatrix

DIMS = 384
IDENTITY = EmbedderIdentity("test", "clusters", DIMS)


def clustered(count: int, seed: int = 0) -> np.ndarray:
    """Unit vectors in 40 clusters around a shared offset (like real embeddings, not centred)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIMS)) + 2.0
    vectors = centres[rng.integers(0, 40, count)] + rng.standard_normal((count, DIMS)) * 0.6
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32)


def open_store(path: Path) -> SqliteStore:
    store = SqliteStore.open(path)
    store.bind_identity(IDENTITY)
    return store


def write(
    store: SqliteStore, name: str, vectors: np.ndarray, source: str = "global", kind: str = "block"
) -> list[int]:
    """One file per 100 vectors; returns the new unit ids in order."""
    writes = []
    for start in range(0, len(vectors), 100):
        path = f"{name}-{start}.md"
        part = vectors[start : start + 100]
        units = [Unit(source, path, kind, i + 1, i + 1, f"{path} {i}") for i in range(len(part))]  # type: ignore[arg-type]
        writes.append(FileWrite(FileStamp(source, path, path, 1, 1), units, part))
    store.write_files(writes)
    ids = store.get_units(range(1, 10 * len(vectors) + 10_000))
    mine = sorted(uid for uid, unit in ids.items() if unit.path.startswith(f"{name}-"))
    return mine


def exact_top(vectors: np.ndarray, ids: list[int], query: np.ndarray, k: int) -> list[int]:
    scores = vectors @ (query / np.linalg.norm(query))
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]


def test_pack_signs_and_hamming_agree_with_a_bit_count() -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((50, 100)).astype(np.float32)
    centre = rng.standard_normal(100).astype(np.float32) * 0.1
    signs = pack_signs(vectors, centre)
    assert signs.shape == (2, 50)  # 100 bits pad to two 64-bit words
    dist = hamming(signs, pack_signs(vectors[7:8], centre))
    expected = ((vectors > centre) != (vectors[7] > centre)).sum(axis=1)
    assert dist.tolist() == expected.tolist()


@pytest.mark.parametrize("count", [1, 5, 37, 200, 999, 1000, 5000])
def test_nearest_rows_are_the_smallest_distances(count: int) -> None:
    rng = np.random.default_rng(count)
    dist = rng.binomial(64, 0.5, size=1000).astype(np.uint16)
    rows = nearest_rows(dist, count)
    assert len(rows) == min(count, 1000) == len(set(rows.tolist()))
    expected = np.sort(dist)[: len(rows)]
    assert np.sort(dist[rows]).tolist() == expected.tolist()


def test_matrix_upserts_and_removes_like_a_dict() -> None:
    rng = np.random.default_rng(2)
    matrix = UnitMatrix(DIMS)
    model: dict[int, tuple[str, np.ndarray]] = {}
    for step in range(60):
        ids = rng.choice(300, size=int(rng.integers(1, 40)), replace=False).tolist()
        if step % 3 == 2:
            matrix.remove(ids)
            for uid in ids:
                model.pop(uid, None)
            continue
        vectors = clustered(len(ids), seed=step)
        sources = [("global", "agent:a")[uid % 2] for uid in ids]
        matrix.upsert(ids, sources, vectors)
        model.update((uid, (src, vec)) for uid, src, vec in zip(ids, sources, vectors, strict=True))
    assert matrix.count == len(model)
    query = clustered(1, seed=99)[0]
    hits = matrix.search(query, ["global", "agent:a"], 1000)  # below the budget: exact
    assert {h.unit_id for h in hits} == set(model)
    for hit in hits:
        assert hit.score == pytest.approx(float(model[hit.unit_id][1] @ query), abs=1e-5)
    agent = matrix.search(query, ["agent:a"], 1000)
    assert {h.unit_id for h in agent} == {u for u, (s, _) in model.items() if s == "agent:a"}
    assert matrix.search(query, ["agent:nobody"], 10) == []


def test_quantized_search_finds_the_exact_neighbours(tmp_path: Path) -> None:
    vectors = clustered(3000)
    with open_store(tmp_path / "i.db") as store:
        ids = write(store, "a", vectors)
        recalls = []
        rng = np.random.default_rng(5)
        queries = vectors[rng.integers(0, len(vectors), 30)] + rng.normal(0, 0.03, (30, DIMS))
        for query in queries.astype(np.float32):  # near the data, as real queries are
            hits = store.vector_search(query, ["global"], "block", 10)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            for hit in hits:  # returned scores are exact cosines, not estimates
                exact = float(vectors[ids.index(hit.unit_id)] @ query / np.linalg.norm(query))
                assert hit.score == pytest.approx(exact, abs=1e-5)
            wanted = set(exact_top(vectors, ids, query, 10))
            recalls.append(len(wanted & {h.unit_id for h in hits}) / 10)
        assert len(ids) > RESCORE_MIN  # so the coarse sign-bit stage really ran
        assert float(np.mean(recalls)) >= 0.95


def test_vector_search_does_not_wait_for_the_store_connection(tmp_path: Path) -> None:
    """A search's vector queries run while its full-text pass holds the store's connection."""
    import threading

    vectors = clustered(600, seed=8)
    with open_store(tmp_path / "i.db") as store:
        ids = write(store, "a", vectors)
        found: list[list[int]] = []
        with store._lock:  # what keyword_search holds for its whole pass
            worker = threading.Thread(
                target=lambda: found.append(
                    [h.unit_id for h in store.vector_search(vectors[3], ["global"], "block", 5)]
                )
            )
            worker.start()
            worker.join(timeout=30)
            assert not worker.is_alive(), "vector search waited for the full-text connection"
        assert found == [exact_top(vectors, ids, vectors[3], 5)]
    with pytest.raises(StoreError, match="not open"):
        store.vector_search(vectors[3], ["global"], "block", 5)


def test_source_and_kind_filters_are_exact(tmp_path: Path) -> None:
    vectors = clustered(1500, seed=3)
    with open_store(tmp_path / "i.db") as store:
        global_ids = write(store, "g", vectors[:1000])
        agent_ids = write(store, "x", vectors[1000:1200], source="agent:x")
        chunk_ids = write(store, "c", vectors[1200:], kind="chunk")
        query = vectors[1100]  # an agent:x vector: the global side must not return it
        hits = store.vector_search(query, ["global"], "block", 50)
        assert {h.unit_id for h in hits} <= set(global_ids)
        assert len(hits) == 50
        agent = store.vector_search(query, ["agent:x"], "block", 20)
        assert [h.unit_id for h in agent] == exact_top(vectors[1000:1200], agent_ids, query, 20)
        both = store.vector_search(query, ["global", "agent:x"], "block", 5)
        assert both[0].unit_id == agent_ids[100]
        assert both[0].score == pytest.approx(1.0)
        chunks = store.vector_search(query, ["global"], "chunk", 500)
        assert {h.unit_id for h in chunks} == set(chunk_ids)
        assert store.vector_search(query, ["agent:y"], "block", 5) == []


def test_other_connections_writes_are_applied_in_place(tmp_path: Path) -> None:
    vectors = clustered(900, seed=4)
    path = tmp_path / "i.db"
    with open_store(path) as writer, open_store(path) as reader:
        first = write(writer, "a", vectors[:600])
        query = vectors[700]
        assert reader.vector_search(query, ["global"], "block", 1)[0].unit_id in first
        assert reader.stats().extra["vector_full_loads"] == 1
        added = write(writer, "b", vectors[600:])
        writer.delete_files([("global", "a-0.md")])  # the first 100 units
        hits = reader.vector_search(query, ["global"], "block", 900)
        assert hits[0].unit_id == added[100]
        assert {h.unit_id for h in hits} == set(first[100:]) | set(added)
        assert reader.stats().extra["vector_full_loads"] == 1  # no reload: applied in place


def test_search_reloads_after_clear_and_after_the_log_was_pruned(tmp_path: Path) -> None:
    vectors = clustered(200, seed=6)
    path = tmp_path / "i.db"
    with open_store(path) as writer, open_store(path) as reader:
        write(writer, "a", vectors[:100])
        assert len(reader.vector_search(vectors[0], ["global"], "block", 500)) == 100
        writer.clear()
        assert reader.vector_search(vectors[0], ["global"], "block", 500) == []
        writer.bind_identity(IDENTITY)
        write(writer, "b", vectors[100:150])
        assert len(reader.vector_search(vectors[0], ["global"], "block", 500)) == 50
        assert reader.stats().extra["vector_full_loads"] == 2  # the new epoch: reloaded
        write(writer, "c", vectors[150:175])  # logged, then pruned before the reader saw it
        writer._write(lambda c: c.execute("DELETE FROM changes"))  # as if pruned by many writes
        write(writer, "d", vectors[175:])
        hits = reader.vector_search(vectors[0], ["global"], "block", 500)
        assert len(hits) == 100
        assert reader.stats().extra["vector_full_loads"] == 3


WRITER = """
import sys
import numpy as np
from memdir.store import EmbedderIdentity, FileStamp, FileWrite, SqliteStore, Unit
path, name, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
vectors = np.random.default_rng(seed).standard_normal((50, 384)).astype(np.float32)
with SqliteStore.open(path) as store:
    store.bind_identity(EmbedderIdentity("test", "clusters", 384))
    units = [Unit("global", name, "block", i + 1, i + 1, f"{name} {i}") for i in range(50)]
    store.write_files([FileWrite(FileStamp("global", name, name, 1, 1), units, vectors)])
"""


def test_writes_of_other_processes_are_searched(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    with SqliteStore.open(path) as reader:
        reader.bind_identity(IDENTITY)
        query = np.ones(DIMS, dtype=np.float32)
        assert reader.vector_search(query, ["global"], "block", 500) == []
        for seed, name in enumerate(("p.md", "q.md", "p.md")):  # p.md rewritten: new unit ids
            done = subprocess.run(
                [sys.executable, "-c", WRITER, str(path), name, str(seed)],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 0, done.stderr
        hits = reader.vector_search(query, ["global"], "block", 500)
        units = reader.get_units(h.unit_id for h in hits)
        assert len(hits) == 100
        assert sorted(u.path for u in units.values()).count("p.md") == 50


def test_a_long_scan_in_two_threads_equals_one() -> None:
    from memdir import machine
    from memdir.store.sqlite.vectors import codec

    rng = np.random.default_rng(9)
    rows = codec.PARALLEL_ROWS + 12_345
    signs = rng.integers(0, 2**63, size=(6, rows), dtype=np.uint64)
    query = rng.integers(0, 2**63, size=(6, 1), dtype=np.uint64)
    split = hamming(signs, query)
    assert split.shape == (rows,)
    assert np.array_equal(split, codec._hamming(signs, query))
    ran = codec.SCAN_POOL in machine._POOLS
    assert ran or machine.usable_cpus() < 2  # the second thread did half of the scan
