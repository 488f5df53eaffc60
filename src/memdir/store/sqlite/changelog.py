"""Freshness across processes: the one change log, and how an engine follows it.

The SQLite store answers searches from per-process copies of some of its tables
(its *engines*, each owning its tables and its copy):

* ``KeywordRanker`` (``keywords/``): ``file_terms``, the terms of every unit;
* ``VectorSearch`` (``vectors/``): the unit vectors in ``embeddings``.

The invariants that keep those copies true, whoever writes:

1. Every write of a file's units (write, delete; a rename keeps the units and
   logs nothing) appends the file's id to ``changes`` in the same transaction.
2. ``meta.change_epoch`` names the log's lifetime: ``clear`` empties the tables,
   empties the log and draws a new epoch. The log keeps its newest ``KEEP``
   entries.
3. An engine remembers the position (epoch, seq) it applied. Before answering it
   calls :func:`catch_up` inside the caller's read transaction (one snapshot):
   the files logged since its position are re-read and applied in place; another
   epoch, a log pruned past its position, or more changed files than
   ``RELOAD_SHARE`` of what it holds reloads it in full. Writes of this process
   and of others are seen alike, and nothing else is needed to see them.
4. Files derived beside the database (a vector graph, ``vectors/graph.py``) carry
   the position they were built at in ``meta``; a reader applies the files logged
   since that position on top of them, and ignores a file of another epoch or
   whose position the log no longer reaches.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from memdir.machine import release_free_memory

KEEP = 50_000  # newest entries kept; an engine further behind reloads in full
RELOAD_SHARE = 0.25  # more changed files than this share of those held: reload in full
RELOAD_MIN = 100  # ... and more than this many
EPOCH_KEY = "change_epoch"


@dataclass(frozen=True)
class Position:
    """A place in the log: its epoch and the last ``seq`` applied (0: none)."""

    epoch: str
    seq: int


@dataclass(frozen=True)
class LogState:
    """The log as a reader saw it: epoch, oldest and newest ``seq`` (0 when empty)."""

    epoch: str
    low: int
    high: int

    @property
    def position(self) -> Position:
        return Position(self.epoch, self.high)

    def reaches(self, seen: Position) -> bool:
        """Whether the log still says what changed since ``seen`` (same epoch, not pruned)."""
        return seen.epoch == self.epoch and seen.seq <= self.high and self.low <= seen.seq + 1


def create_log(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS changes "
        "(seq INTEGER PRIMARY KEY AUTOINCREMENT, file_id INTEGER NOT NULL)"
    )
    reset_log(conn)


def record_changes(conn: sqlite3.Connection, file_ids: Sequence[int]) -> None:
    """Note that the units of ``file_ids`` changed (inside the writer's transaction)."""
    conn.executemany("INSERT INTO changes (file_id) VALUES (?)", [(i,) for i in file_ids])
    conn.execute("DELETE FROM changes WHERE seq <= (SELECT max(seq) FROM changes) - ?", (KEEP,))


def reset_log(conn: sqlite3.Connection) -> None:
    """After every unit was dropped: empty the log and make every engine reload."""
    conn.execute("DELETE FROM changes")
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (EPOCH_KEY, uuid.uuid4().hex)
    )


def log_state(conn: sqlite3.Connection) -> LogState:
    epoch, low, high = conn.execute(
        "SELECT (SELECT value FROM meta WHERE key = ?), "
        "(SELECT min(seq) FROM changes), (SELECT max(seq) FROM changes)",
        (EPOCH_KEY,),
    ).fetchone()
    return LogState(str(epoch or ""), int(low or 0), int(high or 0))


def changed_since(conn: sqlite3.Connection, seq: int) -> list[int]:
    """The distinct file ids logged after ``seq``, oldest first."""
    sql = "SELECT file_id FROM changes WHERE seq > ? GROUP BY file_id ORDER BY min(seq)"
    return [int(row[0]) for row in conn.execute(sql, (seq,))]


class Engine(Protocol):
    """A per-process copy of some tables that follows the change log."""

    position: Position | None  # what it has applied; None: nothing loaded yet

    @property
    def files_held(self) -> int:
        """How many files its copy holds (sets the reload threshold)."""
        ...

    def reload(self, conn: sqlite3.Connection) -> None:
        """Drop the copy and read it again in full."""
        ...

    def apply(self, conn: sqlite3.Connection, file_ids: list[int]) -> None:
        """Re-read the units of ``file_ids`` (gone files are absent from the tables)."""
        ...


def catch_up(engine: Engine, conn: sqlite3.Connection) -> LogState:
    """Bring ``engine`` up to the log (inside the caller's read transaction); returns
    the log's state as seen, which the engine's position now equals."""
    now = log_state(conn)
    seen = engine.position
    if seen is None or not now.reaches(seen):
        _reload(engine, conn)
    elif now.high > seen.seq:
        changed = changed_since(conn, seen.seq)
        if len(changed) > max(RELOAD_MIN, RELOAD_SHARE * engine.files_held):
            _reload(engine, conn)
        else:
            engine.apply(conn, changed)
    engine.position = now.position
    return now


def _reload(engine: Engine, conn: sqlite3.Connection) -> None:
    engine.reload(conn)
    release_free_memory()  # a load's transient arrays are several times what it keeps
