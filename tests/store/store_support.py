"""Helpers shared by the store tests (imported by name, like the other test folders do)."""

from __future__ import annotations

import re
from pathlib import Path

from memdir.store.sqlite.connect import connect
from memdir.store.sqlite.keywords.terms import TOKENIZERS


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
