"""Vector graphs of large kinds: built by the writer, mapped by readers, never stale or lossy."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_vector_quantized import clustered, exact_top, open_store, write

from memdir.embeddings import HashEmbedder
from memdir.index.sync import SourceFile, sync_files
from memdir.store import SqliteStore
from memdir.store.sqlite.vectors import graph as graph_module

MIN_ROWS = 500  # graphs from this many rows on, so a test index of ~2,000 rows has one


def graph_store(path: Path) -> SqliteStore:
    store = open_store(path)
    store.graph_min_rows = MIN_ROWS
    return store


@pytest.fixture
def graph_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows each graph search was asked for (one entry per search)."""
    calls: list[int] = []
    search = graph_module.Graph.search

    def counted(self: graph_module.Graph, query: np.ndarray, count: int) -> np.ndarray:
        calls.append(count)
        return search(self, query, count)

    monkeypatch.setattr(graph_module.Graph, "search", counted)
    return calls


def block_graph_tag(store: SqliteStore) -> graph_module.GraphTag | None:
    """The tag of the graph the store's searches of blocks use (None: they scan)."""
    found = store.vectors._graphs.get("block")
    return None if found is None else found[0]


def graph_files(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.glob(f"{path.name}.graph-*"))


def recall(store: SqliteStore, vectors: np.ndarray, ids: list[int], queries: np.ndarray) -> float:
    found = 0
    for query in queries:
        hits = store.vector_search(query, ["global"], "block", 10)
        found += len({h.unit_id for h in hits} & set(exact_top(vectors, ids, query, 10)))
    return found / (10 * len(queries))


def test_graph_search_finds_the_nearest_with_exact_scores(
    tmp_path: Path, graph_searches: list[int]
) -> None:
    vectors = clustered(2000, seed=11)
    path = tmp_path / "i.db"
    with graph_store(path) as store:
        ids = write(store, "a", vectors)
        assert store.stats().extra["vector_graphs"] == {}
        assert store.optimize() == ["block"]
        assert store.stats().extra["vector_graphs"] == {"block": 2000}
        assert len(graph_files(path)) == 1
        assert store.optimize() == []  # up to date: nothing to build
        noise = np.random.default_rng(1).normal(0, 0.02, (20, vectors.shape[1]))
        queries = vectors[::100] + noise
        assert recall(store, vectors, ids, queries) >= 0.95
        assert graph_searches == [200] * 20  # the graph answered every search
        hits = store.vector_search(queries[0], ["global"], "block", 10)
        unit = queries[0] / np.linalg.norm(queries[0])
        by_id = dict(zip(ids, vectors @ unit, strict=True))
        exact = [round(float(by_id[h.unit_id]), 5) for h in hits]
        assert [round(h.score, 5) for h in hits] == exact


def test_rows_written_after_the_graph_are_found_and_deleted_ones_never(
    tmp_path: Path, graph_searches: list[int]
) -> None:
    vectors = clustered(2000, seed=12)
    path = tmp_path / "i.db"
    with graph_store(path) as writer, graph_store(path) as reader:
        ids = write(writer, "a", vectors)
        writer.optimize()
        query = vectors[5]
        assert reader.vector_search(query, ["global"], "block", 1)[0].unit_id == ids[5]
        # After the graph: a new row equal to the query, and the first file deleted.
        added = write(writer, "b", np.stack([query, -query]))
        writer.delete_files([("global", "a-0.md")])  # ids[0:100], ids[5] among them
        hits = reader.vector_search(query, ["global"], "block", 40)
        assert hits[0].unit_id == added[0]
        assert not {h.unit_id for h in hits} & set(ids[:100])
        assert len(graph_searches) == 2  # still the graph
        expected = exact_top(
            np.concatenate([vectors[100:], query[None]]), [*ids[100:], added[0]], query, 10
        )
        assert [h.unit_id for h in hits[:10]] == expected
        assert reader.stats().extra["vector_full_loads"] == 1  # followed in place


def test_a_new_graph_is_followed_and_the_old_file_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph_module, "GRAPH_REFRESH", 150)
    vectors = clustered(2400, seed=13)
    path = tmp_path / "i.db"
    with graph_store(path) as writer, graph_store(path) as reader:
        ids = write(writer, "a", vectors[:2000])
        writer.optimize()
        first = graph_files(path)
        reader.vector_search(vectors[0], ["global"], "block", 5)
        ids += write(writer, "b", vectors[2000:2100])
        assert writer.optimize() == []  # 100 units changed since: not yet outdated
        ids += write(writer, "c", vectors[2100:])
        assert writer.optimize() == ["block"]
        assert len(graph_files(path)) == 1
        assert graph_files(path) != first
        assert recall(reader, vectors, ids, vectors[2000::20]) >= 0.95
        tag = block_graph_tag(reader)
        assert tag is not None
        assert (tag.file, tag.rows) == (graph_files(path)[0], 2400)


def test_an_unreadable_graph_falls_back_to_the_scan(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, graph_searches: list[int]
) -> None:
    vectors = clustered(2000, seed=14)
    path = tmp_path / "i.db"
    with graph_store(path) as writer:
        ids = write(writer, "a", vectors)
        writer.optimize()
    (path.parent / graph_files(path)[0]).write_bytes(b"not a graph" * 100)
    with caplog.at_level(logging.WARNING), graph_store(path) as reader:
        assert recall(reader, vectors, ids, vectors[::200]) == 1.0
        assert graph_searches == []
        warnings = [r for r in caplog.records if "cannot be read" in r.getMessage()]
        assert len(warnings) == 1  # once, not per search
        assert "memdir index sync" in warnings[0].getMessage()
        assert reader.optimize() == []  # the file exists; a sync past the
        # refresh threshold or `memdir index rebuild` replaces it


def test_clear_drops_graphs_and_their_files(tmp_path: Path) -> None:
    vectors = clustered(1000, seed=15)
    path = tmp_path / "i.db"
    with graph_store(path) as store:
        write(store, "a", vectors)
        store.optimize()
        assert graph_files(path)
        store.clear()
        assert graph_files(path) == []
        assert store.stats().extra["vector_graphs"] == {}


def test_small_kinds_and_disabled_graphs_build_nothing(tmp_path: Path) -> None:
    vectors = clustered(1000, seed=16)
    path = tmp_path / "i.db"
    with graph_store(path) as store:
        write(store, "a", vectors[:400])
        assert store.optimize() == []  # 400 rows < 500
        write(store, "b", vectors[400:])
        store.graph_min_rows = 0
        assert store.optimize() == []
        assert graph_files(path) == []


def test_sync_builds_the_graph_of_a_large_kind(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    files = []
    for day in range(1, 29):
        name = f"memory/2026-02-{day:02d}.md"
        (root / name).parent.mkdir(exist_ok=True)
        lines = [f"- item {day} {i} about topic{i % 17} and thing{day * i % 23}" for i in range(25)]
        (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        files.append(SourceFile("global", name, root / name))
    notes: list[str] = []
    with SqliteStore.open(tmp_path / "i.db", graph_min_rows=MIN_ROWS) as store:
        embedder = HashEmbedder(32)
        sync_files(store, embedder, files, sources=["global"], optimize=False)  # before a search
        assert store.stats().extra["vector_graphs"] == {}
        sync_files(
            store, embedder, files, sources=["global"], progress=lambda u: notes.append(u.detail)
        )
        assert store.stats().extra["vector_graphs"] == {"block": 700}
    assert notes[-1] == "building the vector graph of 700 blocks"


def test_the_graph_library_and_the_model_runtime_load_in_either_order() -> None:
    """usearch 2.26.2+ crashed the process when onnxruntime was imported after it."""
    for first, second in (("usearch.index", "onnxruntime"), ("onnxruntime", "usearch.index")):
        code = f"import {first}, {second}"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
        assert done.returncode == 0, (code, done.stderr.decode()[-2000:])


def test_source_filters_hold_with_a_graph(tmp_path: Path, graph_searches: list[int]) -> None:
    vectors = clustered(2000, seed=17)
    path = tmp_path / "i.db"
    with graph_store(path) as store:
        shared = write(store, "a", vectors[:1500])
        own = write(store, "b", vectors[1500:], source="agent:x")
        store.optimize()
        queries = vectors[::100]
        for query in queries:
            hits = store.vector_search(query, ["global"], "block", 10)  # 75% of rows
            assert {h.unit_id for h in hits} <= set(shared)
            mine = store.vector_search(query, ["agent:x"], "block", 10)  # 25%: scanned
            assert [h.unit_id for h in mine] == exact_top(vectors[1500:], own, query, 10)
        assert graph_searches == [200 * 2000 // 1500] * len(queries)
        assert recall(store, vectors[:1500], shared, queries) >= 0.95
