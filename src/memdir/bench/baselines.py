"""The reference protocol's keyword baselines, to check the harness reproduces them.

``fts5-turn``: SQLite FTS5 (porter) over single turns with the session date
prefixed. ``fts5-chunk``: FTS5 over ~400-token line chunks with 80-token
overlap, top 6. Both read the note files written under ``home/workspace``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import sqlean

from memdir.bench import locomo
from memdir.search.query import STOP_WORDS as _STOP  # the same list as the reference

_TURN = re.compile(r"- [^:]+: ")


def baseline_query(question: str) -> str:
    terms = [t for t in re.findall(r"[a-z0-9]+", question.lower()) if t not in _STOP]
    return " OR ".join(f'"{t}"' for t in terms) or '""'


def read_notes(home: Path) -> dict[str, list[str]]:
    root = home / "workspace"
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8").split("\n")[:-1]
        for p in sorted(root.rglob("*.md"))
    }


def _open_table() -> sqlean.Connection:
    db = sqlean.connect(":memory:")
    db.execute(
        "create virtual table u using fts5(body, path unindexed, a unindexed, b unindexed, "
        "tokenize='porter unicode61')"
    )
    return db


def _searcher(db: sqlean.Connection, limit: int) -> Callable[[str], list[locomo.Span]]:
    def search_fn(question: str) -> list[locomo.Span]:
        rows = db.execute(
            "select path, a, b from u where u match ? order by bm25(u) limit ?",
            (baseline_query(question), limit),
        ).fetchall()
        return [(p, int(a), int(b)) for p, a, b in rows]

    return search_fn


def fts_turn_retriever(home: Path, k: int) -> Callable[[str], list[locomo.Span]]:
    """One FTS row per turn line, ``YYYY-MM-DD`` prefixed; up to 200 hits."""
    db = _open_table()
    for rel, lines in read_notes(home).items():
        date = rel[7:17]
        for i, line in enumerate(lines, 1):
            if _TURN.match(line):
                db.execute("insert into u values (?,?,?,?)", (f"{date} {line}", rel, i, i))
    return _searcher(db, 200)


def fts_chunk_retriever(home: Path, k: int) -> Callable[[str], list[locomo.Span]]:
    """400-token line chunks with 80-token overlap; top 6."""
    db = _open_table()
    for rel, lines in read_notes(home).items():
        start = 0
        while start < len(lines):
            end, size = start, 0
            while end < len(lines) and size < 400:
                size += locomo.line_tokens(lines[end])
                end += 1
            body = "\n".join(lines[start:end])
            db.execute("insert into u values (?,?,?,?)", (body, rel, start + 1, end))
            if end >= len(lines):
                break
            back, overlap = end, 0
            while back > start + 1 and overlap < 80:
                back -= 1
                overlap += locomo.line_tokens(lines[back])
            start = back
    return _searcher(db, 6)
