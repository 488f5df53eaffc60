"""The SQLite index store: schema, search, identity, tokenizers, corruption, drivers."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from keyword_support import keyword_hits
from memdir.embeddings.base import HashEmbedder
from memdir.errors import IndexMismatchError, InvalidInputError, StoreError
from memdir.store import EmbedderIdentity, FileStamp, FileWrite, IndexReader, SqliteStore, Unit
from memdir.store.sqlite.migrations import MIGRATIONS

EMBEDDER = HashEmbedder(32)
IDENTITY = EmbedderIdentity(EMBEDDER.provider, EMBEDDER.model, EMBEDDER.dimensions)


def _units(source: str, path: str, texts: list[str], kind: str = "chunk") -> list[Unit]:
    return [
        Unit(source, path, kind, i + 1, i + 1, text, ("Notes",), sha256=f"{path}:{i}:{text}")  # type: ignore[arg-type]
        for i, text in enumerate(texts)
    ]


def _write(
    store: SqliteStore, path: str, texts: list[str], source: str = "global", *, vectors: bool = True
) -> None:
    units = _units(source, path, texts)
    stamp = FileStamp(source, path, f"sha-{path}-{len(texts)}", 10, 1_700_000_000_000_000_000)
    matrix = EMBEDDER.embed_documents([u.text for u in units]) if vectors else None
    store.write_files([FileWrite(stamp, units, matrix)], identity=IDENTITY if vectors else None)


def test_open_creates_schema_and_reports_backend(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "index.db") as store:
        stats = store.stats()
        assert (stats.files, stats.chunks, stats.identity) == (0, 0, None)
        assert stats.vector_backend == "numpy"
        assert stats.extra["tokenizer"] == "porter"
    conn = sqlite3.connect(tmp_path / "index.db")
    names = [row[0] for row in conn.execute("SELECT name FROM migrations")]
    assert names == [migration.name for migration in MIGRATIONS]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_init_does_no_io(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "sub" / "index.db")
    assert not (tmp_path / "sub").exists()
    with pytest.raises(StoreError, match="not open"):
        store.count_files(["global"])


def test_keyword_search_filters_by_source_and_kind(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        store.bind_identity(IDENTITY)
        _write(store, "a.md", ["we chose sqlite for storage", "the cat sat"])
        _write(store, "b.md", ["sqlite again and again sqlite"], source="agent:bot")
        hits = keyword_hits(store, "sqlite", ["global"], "chunk", 10)
        units = store.get_units(h.unit_id for h in hits)
        assert [units[h.unit_id].path for h in hits] == ["a.md"]
        assert all(h.score >= 0 for h in hits)
        both = keyword_hits(store, "sqlite", ["global", "agent:bot"], "chunk", 10)
        assert len(both) == 2
        assert keyword_hits(store, "sqlite", ["global"], "block", 10) == []
        assert keyword_hits(store, "sqlite", [], "chunk", 10) == []
        assert store.count_files(["global", "agent:bot"]) == 2


def test_heading_path_is_searchable_and_round_trips(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        _write(store, "a.md", ["body text"], vectors=False)
        hit = keyword_hits(store, "notes", ["global"], "chunk", 5)
        unit = store.get_units([hit[0].unit_id])[hit[0].unit_id]
        assert unit.heading_path == ("Notes",)
        assert unit.file_mtime == pytest.approx(1_700_000_000.0)


def test_keyword_only_mode_has_no_vectors(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        _write(store, "a.md", ["plain words only"], vectors=False)
        query = EMBEDDER.embed_query("plain words")
        assert store.vector_search(query, ["global"], "chunk", 5) == []
        assert store.get_vectors([1]) == {}
        assert len(keyword_hits(store, "plain", ["global"], "chunk", 5)) == 1
        assert store.stats().identity is None


def test_identity_mismatch_names_rebuild(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    with SqliteStore.open(path) as store:
        store.bind_identity(IDENTITY)
        _write(store, "a.md", ["hello world"])
    other = EmbedderIdentity("hash", "hash-16", 16)
    with SqliteStore.open(path, identity=other) as store:
        assert len(keyword_hits(store, "hello", ["global"], "chunk", 5)) == 1
        with pytest.raises(IndexMismatchError, match="memdir index rebuild"):
            store.vector_search(np.ones(16, dtype=np.float32), ["global"], "chunk", 5)
        with pytest.raises(IndexMismatchError, match="memdir index rebuild"):
            store.bind_identity(other)
    with SqliteStore.open(path) as store, pytest.raises(IndexMismatchError, match="rebuild"):
        store.vector_search(np.ones(16, dtype=np.float32), ["global"], "chunk", 5)


def test_tokenizer_mismatch_names_rebuild_and_clear_switches(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    with SqliteStore.open(path, tokenizer="porter") as store:
        _write(store, "a.md", ["some text"], vectors=False)
    with pytest.raises(IndexMismatchError, match="memdir index rebuild"):
        SqliteStore.open(path, tokenizer="trigram")
    with SqliteStore.open(path, tokenizer=None) as store:
        assert store.tokenizer == "porter"
        store.clear(tokenizer="trigram")
        assert store.tokenizer == "trigram"
    SqliteStore.open(path, tokenizer="trigram").close()
    with pytest.raises(InvalidInputError, match="unknown tokenizer"):
        SqliteStore.open(tmp_path / "x.db", tokenizer="snowball")


def test_empty_index_adopts_requested_tokenizer(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    SqliteStore.open(path).close()
    with SqliteStore.open(path, tokenizer="trigram") as store:
        assert store.tokenizer == "trigram"


def test_cjk_substring_search_with_trigram(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db", tokenizer="trigram") as store:
        _write(
            store,
            "ja.md",
            ["私たちはデータベースにSQLiteを選びました", "猫が好きです"],
            vectors=False,
        )
        _write(store, "zh.md", ["我们决定使用向量数据库来存储记忆"], vectors=False)
        ja = keyword_hits(store, "データベース", ["global"], "chunk", 5)
        assert [store.get_units([h.unit_id])[h.unit_id].path for h in ja] == ["ja.md"]
        zh = keyword_hits(store, "数据库", ["global"], "chunk", 5)
        assert len(zh) == 1
        assert store.get_units([zh[0].unit_id])[zh[0].unit_id].path == "zh.md"
        assert keyword_hits(store, "好きで", ["global"], "chunk", 5) != []
    with SqliteStore.open(tmp_path / "p.db", tokenizer="porter") as store:
        _write(store, "zh.md", ["我们决定使用向量数据库来存储记忆"], vectors=False)
        assert keyword_hits(store, "数据库", ["global"], "chunk", 5) == []


@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b"\x00" * 50])
def test_garbage_file_is_a_store_error_naming_rebuild(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "i.db"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="memdir index rebuild"):
        SqliteStore.open(path)


def test_truncated_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    with SqliteStore.open(path) as store:
        for n in range(40):
            _write(store, f"f{n}.md", [f"text number {n} " * 40] * 5, vectors=False)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(StoreError, match="memdir index rebuild"):  # noqa: PT012
        store = SqliteStore.open(path)
        try:
            keyword_hits(store, "text", ["global"], "chunk", 50)
            store.stats()
        finally:
            store.close()
    SqliteStore.delete(path)
    assert not path.exists()
    with SqliteStore.open(path) as store:
        assert store.stats().files == 0


def test_vector_search_sees_writes_of_other_connections(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    with SqliteStore.open(path) as reader, SqliteStore.open(path) as writer:
        writer.bind_identity(IDENTITY)
        _write(writer, "a.md", ["alpha beta"])
        query = EMBEDDER.embed_query("gamma delta")
        first = reader.vector_search(query, ["global"], "chunk", 5)
        _write(writer, "b.md", ["gamma delta"])
        second = reader.vector_search(query, ["global"], "chunk", 5)
        assert len(first) == 1
        assert len(second) == 2
        assert second[0].score == pytest.approx(1.0)


def test_embedding_cache_and_clear(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        store.bind_identity(IDENTITY)
        _write(store, "a.md", ["one", "two"])
        hashes = ["a.md:0:one", "a.md:1:two", "missing"]
        assert set(store.cached_vectors(IDENTITY, hashes)) == {"a.md:0:one", "a.md:1:two"}
        other = EmbedderIdentity("hash", "other", 32)
        assert store.cached_vectors(other, hashes) == {}
        store.clear()
        stats = store.stats()
        assert (stats.files, stats.chunks, stats.vectors, stats.identity) == (0, 0, 0, None)
        assert stats.cached_embeddings == 2
        store.clear(keep_cache=False)
        assert store.stats().cached_embeddings == 0


def test_move_and_delete_files(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        store.bind_identity(IDENTITY)
        _write(store, "old.md", ["moving text"])
        [hit] = keyword_hits(store, "moving", ["global"], "chunk", 5)
        new = FileStamp("global", "new.md", "sha", 10, 5)
        assert store.move_files([(("global", "old.md"), new)]) == []
        unit = store.get_units([hit.unit_id])[hit.unit_id]
        assert unit.path == "new.md"
        assert hit.unit_id in store.get_vectors([hit.unit_id])
        assert store.move_files([(("global", "old.md"), new)]) == [("global", "old.md")]
        store.delete_files([("global", "new.md")])
        assert store.get_units([hit.unit_id]) == {}
        assert store.stats().vectors == 0


FALLBACK_SCRIPT = """
import logging, sys
sys.modules["sqlean"] = None  # the import fails as if sqlean.py were not installed
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="WARNING %(message)s")
from memdir.embeddings.base import HashEmbedder
from memdir.index import SourceFile, sync_files
from memdir.store import KeywordQuery, SqliteStore
from pathlib import Path
root = Path(sys.argv[1])
(root / "a.md").write_text("# Tea\\n\\nthe user prefers green tea\\n")
files = [SourceFile("global", "a.md", root / "a.md")]
for _ in range(2):
    with SqliteStore.open(root / "i.db") as store:
        sync_files(store, HashEmbedder(16), files, sources=["global"])
        hits = store.keyword_search(KeywordQuery(("green",)), ["global"], ("block",), 5)["block"]
        query = HashEmbedder(16).embed_query("green tea")
        near = store.vector_search(query, ["global"], "block", 5)
        stats = store.stats()
print("RESULT", len(hits), len(near), stats.vector_backend, stats.extra["driver"])
"""


def test_without_sqlean_the_stdlib_driver_serves(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FALLBACK_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "RESULT 1 1 numpy sqlite3" in lines
    warnings = [line for line in lines if line.startswith("WARNING")]
    assert len(warnings) == 1
    assert "sqlean" in warnings[0]


def test_one_store_shared_by_threads(tmp_path: Path) -> None:
    store: IndexReader
    with SqliteStore.open(tmp_path / "i.db") as shared:
        store = shared  # SqliteStore satisfies the IndexReader protocol search reads through
        shared.bind_identity(IDENTITY)
        errors: list[BaseException] = []

        def work(n: int) -> None:
            try:
                for round_number in range(10):
                    _write(shared, f"t{n}-{round_number}.md", [f"thread {n} words"])
                    keyword_hits(store, "thread", ["global"], "chunk", 50)
                    store.vector_search(EMBEDDER.embed_query("words"), ["global"], "chunk", 5)
            except BaseException as exc:  # collected for the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert store.count_files(["global"]) == 40
        assert len(keyword_hits(store, "thread", ["global"], "chunk", 100)) == 40
