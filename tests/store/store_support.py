"""Helpers shared by the store tests (imported by name, like the other test folders do)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def unpruned_bm25(
    path: Path, expression: str, sources: list[str], kind: str, limit: int
) -> list[tuple[int, float]]:
    """FTS5's own ranking of the index at ``path``: ``-bm25()`` of every matching row,
    best first, ties to the lower unit id (no pruning, no in-memory ranking)."""
    conn = sqlite3.connect(path)
    marks = ", ".join("?" * len(sources))
    rows = conn.execute(
        "SELECT u.id, -bm25(units_fts) FROM units_fts JOIN units u ON u.id = units_fts.rowid "
        f"WHERE units_fts MATCH ? AND u.kind = ? AND u.source IN ({marks}) "
        "ORDER BY bm25(units_fts), u.id LIMIT ?",
        (expression, kind, *sources, limit),
    ).fetchall()
    conn.close()
    return [(int(r[0]), float(r[1])) for r in rows]
