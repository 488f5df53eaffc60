"""Access counts written behind: a recall counts its facts in memory, and the counts reach
the database when it is free (or when the store closes), so a recall never queues behind
a save for statistics. A process killed meanwhile loses them, as a rebuild does."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime

from memdir.store.sqlite.connect import BUSY_TIMEOUT_MS, Connection, in_transaction, is_locked
from memdir.store.sqlite.facts import sql
from memdir.store.times import to_us


class AccessCounts:
    """Counts not written yet, of one scope: fact id -> (count, last access in us)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._pending: dict[str, tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def count(self, ids: Sequence[str], when: datetime) -> None:
        moment = to_us(when)
        for fid in ids:
            count, last = self._pending.get(fid, (0, moment))
            self._pending[fid] = (count + 1, max(last, moment))

    def clear(self) -> None:
        self._pending.clear()

    def write(self, conn: sqlite3.Connection) -> None:
        """Add the counts to the facts (inside the caller's write transaction)."""
        rows = [(n, last, self.source, fid) for fid, (n, last) in self._pending.items()]
        sql.add_accesses(conn, rows)


def try_write(db: Connection, fn: Callable[[sqlite3.Connection], None]) -> bool:
    """``fn`` in a write transaction if the database is free now; False if another writer
    holds it (no waiting: the busy timeout is off until the write lock is ours)."""

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        fn(conn)

    db.conn.execute("PRAGMA busy_timeout = 0")
    try:
        in_transaction(db.conn, write, "BEGIN IMMEDIATE")
    except db.errors as exc:
        if is_locked(exc):
            return False
        raise
    finally:
        db.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return True
