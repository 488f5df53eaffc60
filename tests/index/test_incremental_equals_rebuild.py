"""The index a day of writes leaves, write by write, equals the index built afresh from
the files: the same units (kind, lines, text, heading path, hash), the same vectors and
the same full-text postings, and searches rank the same hits with the same scores.
Appends, saves, edits in the middle of the note, an edit made outside memdir, an
interrupted append and a note rewritten shorter."""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
from memdir.store.sqlite.keywords.terms import read_terms
from memdir.workspace.daily import journal_of

NO_HISTORY = {"history": {"enabled": False}}
DAY = dt.datetime(2026, 3, 14, 9, 30)
NOTE = "memory/2026-03-14.md"

UnitKey = tuple[str, str, str, int, int, str, str, str]


def _open(home: Path) -> Memory:
    return Memory.open(home, embedder=HashEmbedder(), chat_model=None, overrides=NO_HISTORY)


def _snapshot(db: Path) -> tuple[dict[UnitKey, list[np.ndarray]], dict[UnitKey, list[object]]]:
    """Vectors and postings of every unit, by what the unit is (ids differ between builds)."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:  # (no checkpoint)
        rows = conn.execute(
            "SELECT u.id, u.source, u.path, u.kind, u.start_line, u.end_line, u.text, "
            "u.heading_path, u.sha256, e.vector FROM units u "
            "LEFT JOIN embeddings e ON e.id = u.vector_id"
        ).fetchall()
        keys = {row[0]: tuple(row[1:9]) for row in rows}
        vectors: dict[UnitKey, list[np.ndarray]] = {}
        for row in rows:
            vectors.setdefault(keys[row[0]], []).append(np.frombuffer(row[9], dtype=np.float32))
        postings: dict[UnitKey, list[object]] = {}
        for terms in read_terms(conn, None):
            offset = 0
            for n, unit in enumerate(terms.units.tolist()):
                size = int(terms.sizes[n])
                end = offset + size
                found = terms.terms[offset:end].tolist(), terms.counts[offset:end].tolist()
                pairs = sorted(zip(*found, strict=True))
                offset = end
                postings.setdefault(keys[unit], []).append((int(terms.lengths[n]), pairs))
    return vectors, postings


def _assert_as_rebuilt(memory: Memory, tmp_path: Path, name: str) -> None:
    fresh = tmp_path / name
    shutil.copytree(memory.workspace.root, fresh / "workspace")
    with _open(fresh) as rebuilt:
        rebuilt.sync()
        expected = _snapshot(rebuilt.index_path)
        for query in QUERIES:  # the same index ranks the same: ids play no part
            assert _hits(memory, query) == _hits(rebuilt, query), (name, query)
    vectors, postings = _snapshot(memory.index_path)
    stale = [key[2:5] for key in vectors.keys() - expected[0].keys()]
    missing = [key[2:5] for key in expected[0].keys() - vectors.keys()]
    assert (stale, missing) == ([], []), name
    for key, found in vectors.items():
        assert len(found) == len(expected[0][key]), (name, key)
        for got, want in zip(found, expected[0][key], strict=True):
            assert got.tobytes() == want.tobytes(), (name, key[2:5])  # to the bit
    assert postings == expected[1], name


QUERIES = ["billing 12", "deploy 3", "Atlas project", "a heading in the middle", "by hand"]


def _hits(memory: Memory, query: str) -> list[tuple[str, int, int, float]]:
    found = memory.search(query, max_results=8).hits
    return [(hit.path, hit.start_line, hit.end_line, round(hit.score, 6)) for hit in found]


def _append(memory: Memory, first: int, count: int) -> None:
    """Entries, and a saved fact after every fifth (saved to today's note)."""
    for n in range(first, first + count):
        memory.append_daily(f"- entry {n}: talked about deploy {n % 7}\n  and billing {n}", DAY)
        if n % 5 == 4:
            memory.save(f"The user's project {n} is called Atlas-{n * 7}.")


def test_an_index_written_save_by_save_equals_one_rebuilt(home: Path, tmp_path: Path) -> None:
    with _open(home) as memory:
        memory.init()
        note = memory.workspace.root / NOTE
        _append(memory, 0, 40)
        memory.append_daily("## Afternoon\n\n```\nopen fence", DAY)
        _append(memory, 40, 10)
        _assert_as_rebuilt(memory, tmp_path, "appends")

        memory.edit_file(NOTE, "entry 12: talked", "entry 12: argued at length")
        memory.insert_lines(NOTE, 30, "\n# A heading put in the middle\n")
        _append(memory, 50, 10)
        _assert_as_rebuilt(memory, tmp_path, "edits in the middle")

        text = note.read_text(encoding="utf-8")  # an editor changes the note outside memdir
        note.write_text(text.replace("entry 5:", "entry five:") + "\nwritten by hand\n")
        memory.sync()
        _append(memory, 60, 5)
        _assert_as_rebuilt(memory, tmp_path, "outside edit")

        size = note.stat().st_size  # a writer killed in the middle of an append
        journal_of(note).write_text(f"{size} {size + 500}", encoding="ascii")
        with note.open("ab") as handle:
            handle.write(b"\n\n- a torn entr")
        _append(memory, 65, 3)
        assert "torn" not in note.read_text(encoding="utf-8")
        _assert_as_rebuilt(memory, tmp_path, "interrupted append")

        lines = note.read_text(encoding="utf-8").split("\n")
        memory.write_file(NOTE, "\n".join(lines[: len(lines) // 3]) + "\n")
        _append(memory, 68, 5)
        _assert_as_rebuilt(memory, tmp_path, "rewritten shorter")
        assert memory.search("Atlas-476").hits  # the fact saved with entry 68
