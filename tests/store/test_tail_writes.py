"""``SqliteStore.write_tail``: the end of a file rewritten over the rows the index holds,
only when they are of the text the writer cut (else nothing is written)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from keyword_support import keyword_hits
from memdir.embeddings.base import HashEmbedder
from memdir.store import EmbedderIdentity, FileStamp, FileWrite, SqliteStore, Unit
from memdir.store.contracts import FileTail

EMBEDDER = HashEmbedder(32)
IDENTITY = EmbedderIdentity(EMBEDDER.provider, EMBEDDER.model, EMBEDDER.dimensions)
NO_LINE = 2**31 - 1


def _units(texts: dict[int, str]) -> list[Unit]:
    return [
        Unit("global", "memory/day.md", "chunk", line, line, text, (), sha256=f"{line}:{text}")
        for line, text in texts.items()
    ]


def _write(units: list[Unit]) -> FileWrite:
    stamp = FileStamp("global", "memory/day.md", f"sha-{len(units)}-{units[-1].text}", 9, 1)
    return FileWrite(stamp, units, EMBEDDER.embed_documents([u.text for u in units]))


def _rows(db: Path) -> dict[int, tuple[int, str]]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        found = conn.execute("SELECT start_line, id, text FROM units").fetchall()
    return {line: (uid, text) for line, uid, text in found}


def test_a_tail_replaces_the_rows_from_its_line_and_keeps_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    with SqliteStore(db) as store:
        store.bind_identity(IDENTITY)
        first = _write(_units({1: "alpha", 2: "bravo", 3: "charlie"}))
        store.write_files([first], identity=IDENTITY)
        before = _rows(db)

        stale = FileTail("sha of another text", 3, NO_LINE)
        tail = _write(_units({3: "charlie grown", 4: "delta"}))
        assert not store.write_tail(tail, stale, identity=IDENTITY)
        assert _rows(db) == before  # nothing written

        assert store.write_tail(tail, FileTail(first.stamp.sha256, 3, NO_LINE), IDENTITY)
        after = _rows(db)
        assert {line: text for line, (_, text) in after.items()} == {
            1: "alpha", 2: "bravo", 3: "charlie grown", 4: "delta"
        }  # fmt: skip
        assert [after[1], after[2]] == [before[1], before[2]]  # the same rows, ids and all
        assert store.file_stamps(["global"])[("global", "memory/day.md")] == tail.stamp
        for word, line in (("delta", 4), ("charlie", 3)):
            hits = keyword_hits(store, word, ["global"], "chunk", 5)
            assert [hit.unit_id for hit in hits] == [after[line][0]]
