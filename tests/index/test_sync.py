"""Incremental sync: add, change, rename, delete, the embedding cache and per-file problems."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from keyword_support import keyword_hits
from memdir.embeddings.base import HashEmbedder
from memdir.errors import IndexMismatchError, InvalidInputError
from memdir.index import SourceFile, SyncOptions, rebuild_index, sync_files
from memdir.progress import ProgressUpdate
from memdir.store import EmbedderIdentity, SqliteStore


class CountingEmbedder:
    """HashEmbedder that records every text it embeds."""

    def __init__(self, dimensions: int = 32) -> None:
        self.inner = HashEmbedder(dimensions)
        self.provider = self.inner.provider
        self.model = self.inner.model
        self.dimensions = dimensions
        self.texts: list[str] = []
        self.calls = 0

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.inner.embed_query(text)


def _files(root: Path, source: str = "global") -> list[SourceFile]:
    return [
        SourceFile(source, p.relative_to(root).as_posix(), p) for p in sorted(root.rglob("*.md"))
    ]


def _sync(store: SqliteStore, embedder: CountingEmbedder | None, root: Path, **kw: object):  # type: ignore[no-untyped-def]
    return sync_files(store, embedder, _files(root), sources=["global"], **kw)  # type: ignore[arg-type]


def _paths(store: SqliteStore, word: str) -> set[str]:
    hits = keyword_hits(store, f"{word}", ["global"], "chunk", 50)
    return {u.path for u in store.get_units(h.unit_id for h in hits).values()}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- the user prefers tea\n- deploys on fridays\n")
    (ws / "memory" / "2024-01-02.md").write_text("# Day\n\nWe picked sqlite for the index.\n")
    return ws


def test_add_change_rename_delete(tmp_path: Path, root: Path) -> None:
    embedder = CountingEmbedder()
    with SqliteStore.open(tmp_path / "i.db") as store:
        first = _sync(store, embedder, root)
        assert (first.added, first.changed, first.deleted, first.unchanged) == (2, 0, 0, 0)
        assert first.units_written == store.stats().chunks + store.stats().blocks
        assert first.embedded == store.stats().blocks  # chunks take their blocks' vectors
        assert store.stats().vectors == first.units_written
        assert first.cache_hits == 0
        assert _paths(store, "tea") == {"MEMORY.md"}

        (root / "MEMORY.md").write_text(
            "# Memory\n\n- the user prefers coffee\n- deploys on fridays\n"
        )
        (root / "memory" / "2024-01-02.md").rename(root / "memory" / "renamed.md")
        (root / "notes.md").write_text("A new note about gardening.\n")
        second = _sync(store, embedder, root)
        assert (second.added, second.changed, second.renamed, second.deleted) == (1, 1, 1, 0)
        assert _paths(store, "tea") == set()
        assert _paths(store, "coffee") == {"MEMORY.md"}
        assert _paths(store, "sqlite") == {"memory/renamed.md"}

        (root / "notes.md").unlink()
        third = _sync(store, embedder, root)
        assert (third.deleted, third.unchanged, third.added) == (1, 2, 0)
        assert _paths(store, "gardening") == set()
        assert store.stats().files == 2
        assert store.stats().vectors == store.stats().chunks + store.stats().blocks


def test_unchanged_text_is_never_re_embedded(tmp_path: Path, root: Path) -> None:
    embedder = CountingEmbedder()
    with SqliteStore.open(tmp_path / "i.db") as store:
        _sync(store, embedder, root)
        embedded_once = list(embedder.texts)
        assert len(embedded_once) == len(set(embedded_once))

        # same content, new mtime: hashed, not parsed, not embedded
        os.utime(root / "MEMORY.md", ns=(1, 1_600_000_000_000_000_000))
        again = _sync(store, embedder, root)
        assert (again.unchanged, again.embedded, embedder.texts) == (2, 0, embedded_once)

        # a changed file: only the new line's units are embedded
        (root / "MEMORY.md").write_text(
            "# Memory\n\n- the user prefers tea\n- deploys on fridays\n\n- likes long walks\n"
        )
        changed = _sync(store, embedder, root)
        new_texts = embedder.texts[len(embedded_once) :]
        assert changed.changed == 1
        assert changed.cache_hits > 0
        assert all(text not in embedded_once for text in new_texts)
        assert "likes long walks" in new_texts  # a block: its words, no heading, no marker

        # rebuild keeps the cache: nothing is embedded again
        before = len(embedder.texts)
        rebuilt = rebuild_index(store, embedder, _files(root), sources=["global"])
        assert rebuilt.added == 2
        assert rebuilt.embedded == 0
        assert len(embedder.texts) == before
        assert store.stats().vectors == rebuilt.units_written


def test_embedding_batches_span_files(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(30):
        (root / f"f{n}.md").write_text(f"# File {n}\n\nparagraph {n} one\n\nparagraph {n} two\n")
    embedder = CountingEmbedder()
    with SqliteStore.open(tmp_path / "i.db") as store:
        report = _sync(store, embedder, root, options=SyncOptions(batch_size=32))
        # the 60 blocks are embedded; the 30 chunks' vectors come from their blocks'
        assert report.embedded == len(embedder.texts) == 60
        assert all(text.startswith("paragraph") for text in embedder.texts)
        assert embedder.calls == 2  # 60 texts in batches of 32, across 30 files
        assert store.stats().vectors == 90


def test_keyword_only_sync(tmp_path: Path, root: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        report = _sync(store, None, root)
        assert report.added == 2
        assert report.embedded == 0
        stats = store.stats()
        assert stats.identity is None
        assert stats.vectors == 0
        assert _paths(store, "fridays") == {"MEMORY.md"}


def test_adding_an_embedder_later_embeds_existing_units(tmp_path: Path, root: Path) -> None:
    embedder = CountingEmbedder()
    with SqliteStore.open(tmp_path / "i.db") as store:
        _sync(store, None, root)
        report = _sync(store, embedder, root)
        stats = store.stats()
        assert report.changed == 2
        assert stats.vectors == stats.chunks + stats.blocks > 0
        (root / "late.md").write_text("written while keyword-only\n")
        _sync(store, None, root)
        assert store.stats().vectors == stats.vectors
        again = _sync(store, embedder, root)
        assert (again.changed, again.unchanged) == (1, 2)
        final = store.stats()
        assert final.vectors == final.chunks + final.blocks
        assert _sync(store, embedder, root).unchanged == 3


def test_identity_mismatch_stops_sync(tmp_path: Path, root: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        _sync(store, CountingEmbedder(32), root)
        with pytest.raises(IndexMismatchError, match="memdir index rebuild"):
            _sync(store, CountingEmbedder(16), root)
        report = rebuild_index(store, CountingEmbedder(16), _files(root), sources=["global"])
        assert report.added == 2
        assert store.stats().identity == EmbedderIdentity("hash", "hash-16", 16)


def test_per_file_problems_are_skipped_and_reported(tmp_path: Path, root: Path) -> None:
    (root / "binary.md").write_bytes(b"\x89PNG\r\n\x00\x00 binary")
    (root / "latin.md").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (root / "big.md").write_text("x" * 3000)
    files = [*_files(root), SourceFile("global", "ghost.md", root / "ghost.md")]
    with SqliteStore.open(tmp_path / "i.db") as store:
        report = sync_files(
            store,
            CountingEmbedder(),
            files,
            sources=["global"],
            options=SyncOptions(max_file_bytes=2000),
        )
        reasons = dict(report.skipped)
        assert set(reasons) == {"binary.md", "latin.md", "big.md", "ghost.md"}
        assert "binary" in reasons["binary.md"]
        assert "UTF-8" in reasons["latin.md"]
        assert "limit" in reasons["big.md"]
        assert "vanished" in reasons["ghost.md"]
        assert report.added == 2
        assert store.stats().files == 2


def test_file_that_becomes_unindexable_leaves_the_index(tmp_path: Path, root: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        _sync(store, None, root)
        (root / "MEMORY.md").write_bytes(b"\xff\xfe not utf8 tea")
        report = _sync(store, None, root)
        assert [p for p, _ in report.skipped] == ["MEMORY.md"]
        assert _paths(store, "tea") == set()
        assert store.stats().files == 1


def test_progress_and_source_checks(tmp_path: Path, root: Path) -> None:
    seen: list[ProgressUpdate] = []
    with SqliteStore.open(tmp_path / "i.db") as store:
        _sync(store, None, root, progress=seen.append)
        assert [(u.stage, u.done, u.total, u.unit) for u in seen] == [
            ("reading files", 1, 2, "files"),
            ("reading files", 2, 2, "files"),
        ]
        seen.clear()
        _sync(store, None, root, progress=seen.append)  # unchanged files count as read
        assert [u.done for u in seen] == [1, 2]
        with pytest.raises(InvalidInputError, match="agent:x"):
            sync_files(store, None, _files(root, "agent:x"), sources=["global"])


def test_progress_counts_the_units_embedded(tmp_path: Path, root: Path) -> None:
    for day in range(3, 9):
        bullets = "".join(f"- note {day}.{n} about topic {n * day}\n" for n in range(12))
        (root / "memory" / f"2024-01-0{day}.md").write_text(f"# Day {day}\n\n{bullets}")
    embedder = CountingEmbedder()
    seen: list[ProgressUpdate] = []
    with SqliteStore.open(tmp_path / "i.db") as store:
        report = _sync(store, embedder, root, progress=seen.append,
                       options=SyncOptions(batch_size=16))  # fmt: skip
    embedding = [u for u in seen if u.stage == "embedding"]
    assert [u.done for u in embedding] == sorted({u.done for u in embedding})  # rising
    assert embedding[0].done == 0  # shown before the first batch
    assert len(embedding) == embedder.calls + 1 > 2  # then one update per batch
    assert embedding[-1].done == embedding[-1].total == report.embedded == len(embedder.texts)
    assert all(u.unit == "units" for u in embedding)


def test_sources_are_independent(tmp_path: Path, root: Path) -> None:
    other = tmp_path / "agent"
    other.mkdir()
    (other / "MEMORY.md").write_text("agent memory about tea\n")
    with SqliteStore.open(tmp_path / "i.db") as store:
        _sync(store, None, root)
        sync_files(store, None, _files(other, "agent:bot"), sources=["agent:bot"])
        # syncing global again must not delete the agent's files
        report = _sync(store, None, root)
        assert report.deleted == 0
        assert store.count_files(["agent:bot"]) == 1
        assert store.count_files(["global"]) == 2
        sync_files(store, None, [], sources=["agent:bot"])
        assert store.count_files(["agent:bot"]) == 0


MARKED = (
    "# 2026-11-20\n\n"
    "- Staging is staging-db-2 <!-- memdir:fact id=f-abcdefghij cat=fact imp=5 "
    "at=2026-11-20T10:00:00Z -->\n"
    "- lunch at noon <!-- a comment of the author -->\n"
)


def test_units_hold_the_text_people_see_not_memdir_markers(tmp_path: Path, root: Path) -> None:
    (root / "memory" / "2026-11-20.md").write_text(MARKED)
    embedder = CountingEmbedder()
    with SqliteStore.open(tmp_path / "i.db") as store:
        _sync(store, embedder, root)
        assert keyword_hits(store, "memdir", ["global"], "block", 10) == []
        assert keyword_hits(store, "abcdefghij", ["global"], "chunk", 10) == []
        found = keyword_hits(store, "staging", ["global"], "block", 10)
        unit = store.get_units([found[0].unit_id])[found[0].unit_id]
    assert (unit.start_line, unit.end_line, unit.text) == (3, 3, "- Staging is staging-db-2")
    assert "Staging is staging-db-2" in embedder.texts
    assert not any("memdir:" in text for text in embedder.texts)
    assert any("<!-- a comment of the author -->" in text for text in embedder.texts)


def test_an_index_of_an_older_memdir_is_re_chunked_once(tmp_path: Path, root: Path) -> None:
    """m002: units written with markers and heading-prefixed block vectors are rewritten."""
    (root / "memory" / "2026-11-20.md").write_text(MARKED)
    db = tmp_path / "i.db"
    with SqliteStore.open(db) as store:
        _sync(store, CountingEmbedder(), root)
    conn = sqlite3.connect(db)
    with conn:  # what an older memdir left: the marker in the text, m002 not applied
        conn.execute("UPDATE units SET text = text || ' <!-- memdir:fact id=f-abcdefghij -->'")
        conn.execute("DELETE FROM migrations WHERE name = 'm002_reindex_units'")
    conn.close()
    embedder = CountingEmbedder()
    with SqliteStore.open(db) as store:
        report = _sync(store, embedder, root)
        assert report.changed == 3
        assert keyword_hits(store, "memdir", ["global"], "chunk", 10) == []
        assert _sync(store, embedder, root).unchanged == 3
