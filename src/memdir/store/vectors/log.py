"""The ``vector_log`` table: which unit ids had their vectors changed, in order.

Owns the log's DDL and every statement that writes it. Each ``put``/``delete``
of a backend appends the touched ids inside the writer's transaction; a
``VectorMirror`` reads the log to catch up with writes of any process. The log
keeps its newest ``LOG_KEEP`` entries; ``reset_log`` empties it and bumps
``meta.vector_epoch`` so that every mirror reloads in full.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

EPOCH_KEY = "vector_epoch"
LOG_KEEP = 50_000  # newest vector_log entries kept; older readers reload in full


def has_log(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vector_log'").fetchone()
    return row is not None


def create_log(conn: sqlite3.Connection) -> None:
    """The log of unit ids whose vectors changed (created with the schema, like the FTS table:
    the test suite pins the migration list, and an older index gains it on open)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS vector_log "
        "(seq INTEGER PRIMARY KEY AUTOINCREMENT, unit_id INTEGER NOT NULL)"
    )


def log_changes(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
    """Record that the vectors of ``ids`` changed (inside the writer's transaction)."""
    conn.executemany("INSERT INTO vector_log (unit_id) VALUES (?)", [(i,) for i in ids])
    conn.execute(
        "DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?", (LOG_KEEP,)
    )


def reset_log(conn: sqlite3.Connection, epoch: str) -> None:
    """After every vector was dropped: empty the log and make every mirror reload."""
    conn.execute("DELETE FROM vector_log")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (EPOCH_KEY, epoch))
