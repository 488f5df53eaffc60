"""Change logs: which rows a writer touched, in order, so in-memory mirrors can catch up.

A ``ChangeLog`` owns one table of ``(seq, <id column>)`` and one ``meta`` key, its
epoch. Writers append the ids they touch inside their own transaction; a mirror
(``memdir.store.vectors.VectorMirror``, ``memdir.store.keywords.KeywordIndex``)
remembers the epoch and the last ``seq`` it applied, and before a search reads
the log's state (one small query): new entries are re-read by id, a new epoch
(after ``clear``) or a log pruned past what the mirror has seen means a full
reload. Writes of this and other processes are seen alike. The log keeps its
newest ``KEEP`` entries.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

KEEP = 50_000  # newest entries kept; a mirror further behind reloads in full


@dataclass(frozen=True)
class LogState:
    """The log as a reader saw it: epoch, oldest and newest ``seq`` (0 when empty)."""

    epoch: str
    low: int
    high: int


@dataclass(frozen=True)
class ChangeLog:
    """One change-log table (``table``) and the ``meta`` key holding its epoch."""

    table: str
    column: str
    epoch_key: str

    def exists(self, conn: sqlite3.Connection) -> bool:
        row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (self.table,)).fetchone()
        return row is not None

    def create(self, conn: sqlite3.Connection) -> None:
        """Created with the schema, like the FTS table (the migration list is pinned by the
        tests; an older index gains the table when it is opened)."""
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {self.table} "
            f"(seq INTEGER PRIMARY KEY AUTOINCREMENT, {self.column} INTEGER NOT NULL)"
        )

    def record(self, conn: sqlite3.Connection, ids: Sequence[int]) -> None:
        """Note that ``ids`` changed (inside the writer's transaction)."""
        conn.executemany(
            f"INSERT INTO {self.table} ({self.column}) VALUES (?)", [(i,) for i in ids]
        )
        conn.execute(
            f"DELETE FROM {self.table} WHERE seq <= (SELECT max(seq) FROM {self.table}) - ?",
            (KEEP,),
        )

    def reset(self, conn: sqlite3.Connection, epoch: str) -> None:
        """After every row was dropped: empty the log and make every mirror reload."""
        conn.execute(f"DELETE FROM {self.table}")
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (self.epoch_key, epoch)
        )

    def state(self, conn: sqlite3.Connection) -> LogState:
        epoch, low, high = conn.execute(
            f"SELECT (SELECT value FROM meta WHERE key = ?), "
            f"(SELECT min(seq) FROM {self.table}), (SELECT max(seq) FROM {self.table})",
            (self.epoch_key,),
        ).fetchone()
        return LogState(str(epoch or ""), int(low or 0), int(high or 0))

    def changed_since(self, conn: sqlite3.Connection, seq: int) -> list[int]:
        """The distinct ids logged after ``seq``."""
        sql = f"SELECT DISTINCT {self.column} FROM {self.table} WHERE seq > ?"
        return [int(row[0]) for row in conn.execute(sql, (seq,))]

    def behind(self, seen: tuple[str, int], now: LogState) -> bool:
        """Whether a mirror that applied ``seen`` (epoch, seq) must reload in full."""
        if seen[0] != now.epoch or now.high < seen[1]:
            return True
        return now.low > seen[1] + 1  # pruned past what the mirror has seen

    def catch_up(
        self, conn: sqlite3.Connection, seen: tuple[str, int] | None
    ) -> tuple[tuple[str, int], list[int] | None]:
        """What a mirror that applied ``seen`` (None: nothing yet) has to do.

        Returns the state to remember once done, and the ids changed since ``seen``
        (empty: nothing to do), or None when the mirror must reload in full.
        """
        now = self.state(conn)
        changed: list[int] | None = []
        if seen is None or self.behind(seen, now):
            changed = None
        elif now.high > seen[1]:
            changed = self.changed_since(conn, seen[1])
        return (now.epoch, now.high), changed
