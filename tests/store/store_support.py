"""Helpers shared by the store tests (imported by name, like the other test folders do)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from memdir.store.sqlite.connect import connect
from memdir.store.sqlite.keywords.terms import TOKENIZERS
from memdir.store.sqlite.migrations import MIGRATIONS


def fts5_ranking(
    path: Path, terms: list[str], sources: list[str], kind: str, limit: int
) -> list[tuple[int, float]]:
    """The test oracle: FTS5's own ``bm25()`` over every unit of the index at ``path``, for
    the OR of the query terms' tokens, best first, ties to the lower unit id, clamped at 0.

    The units go into a fresh FTS5 table with the index's tokenizer, so this shares no
    code with the in-memory ranking it checks. FTS5 tokenises a MATCH string itself (a
    stemmed token would be stemmed again), so each term is cut here into the pieces its
    tokenizer makes one token of: runs of letters and digits for ``porter``, every
    three characters for ``trigram``.
    """
    # the store's own driver: a second SQLite library in the process would drop the
    # store's POSIX locks on the file when it closes its own handle
    conn = connect(path).conn
    try:
        (tokenizer,) = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
        spec = TOKENIZERS[tokenizer]
        conn.execute(
            f"CREATE VIRTUAL TABLE temp.oracle USING fts5(text, heading_path, tokenize='{spec}')"
        )
        conn.execute(
            "INSERT INTO temp.oracle (rowid, text, heading_path) "
            "SELECT id, text, heading_path FROM units"
        )
        pieces = [p for term in terms for p in _pieces(term, tokenizer)]
        if not pieces:
            return []
        expression = " OR ".join('"' + p.replace('"', '""') + '"' for p in pieces)
        marks = ", ".join("?" * len(sources))
        rows = conn.execute(
            "SELECT u.id, -bm25(oracle) FROM temp.oracle JOIN units u ON u.id = oracle.rowid "
            f"WHERE oracle MATCH ? AND u.kind = ? AND u.source IN ({marks}) "
            "ORDER BY bm25(oracle), u.id LIMIT ?",
            (expression, kind, *sources, limit),
        ).fetchall()
    finally:
        conn.close()
    return [(int(r[0]), max(0.0, float(r[1]))) for r in rows]


def _pieces(term: str, tokenizer: str) -> list[str]:
    if tokenizer == "trigram":
        return [term[i : i + 3] for i in range(len(term) - 2)]
    return re.findall(r"[^\W_]+", term)


def index_at_m002(path: Path, *, vec0: bool = False) -> sqlite3.Connection:
    """A connection (autocommit, inside ``BEGIN``) to a new index with m001 and m002
    applied and recorded, as an earlier memdir left it; ``vec0`` loads sqlite-vec (into
    the store's driver: the stdlib's ``sqlite3`` cannot load extensions)."""
    driver = pytest.importorskip("sqlean") if vec0 else sqlite3
    conn = driver.connect(path, isolation_level=None)
    if vec0:
        sqlite_vec = pytest.importorskip("sqlite_vec")
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
    conn.execute("BEGIN")
    conn.execute(
        "CREATE TABLE migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
        "applied_at TEXT NOT NULL)"
    )
    for migration in MIGRATIONS[:2]:
        migration.setup(conn)
        conn.execute("INSERT INTO migrations (name, applied_at) VALUES (?, 'x')", (migration.name,))
    return conn
