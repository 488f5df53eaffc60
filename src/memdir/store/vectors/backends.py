"""The two tables unit vectors can live in, behind one ``VectorIndex`` interface.

Owns the ``VectorIndex`` protocol the store calls and its two backends:
``VecIndex`` (a sqlite-vec ``vec0`` virtual table with a ``kind`` partition key)
and ``NumpyIndex`` (float32 BLOBs in the plain ``unit_vectors`` table, no
extension needed). Both store and delete through one shared path that also
writes ``vector_log``, and both search through their own ``VectorMirror``; they
differ only in DDL and in how rows are read back. Which backend an index uses
is chosen by the store (``memdir.store.sqlite``) and recorded in ``meta``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

from memdir.store.base import ScoredId, UnitKind
from memdir.store.vectors.codec import StoredRow, Vector, decode
from memdir.store.vectors.log import log_changes
from memdir.store.vectors.mirror import VectorMirror

VEC_TABLE = "unit_vec"
_BATCH = 500  # ids per `IN (...)` query on the plain table


class VectorIndex(Protocol):
    """Where unit vectors live; every method runs on the caller's connection."""

    name: str
    mirror: VectorMirror  # this process's copy, which every search reads

    def create(self, conn: sqlite3.Connection, dimensions: int) -> None: ...

    def put(
        self, conn: sqlite3.Connection, rows: Sequence[tuple[int, str, str]], vectors: Vector
    ) -> None:
        """Store vectors for ``(unit_id, kind, source)`` rows (one vector per row)."""
        ...

    def delete(self, conn: sqlite3.Connection, ids: Sequence[int]) -> None: ...

    def search(
        self,
        conn: sqlite3.Connection,
        query: Vector,
        sources: Sequence[str],
        kind: UnitKind,
        limit: int,
    ) -> list[ScoredId]: ...

    def get(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Vector]: ...

    def get_ids(self, conn: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
        """Which of ``ids`` have a vector."""
        ...


def _placeholders(count: int) -> str:
    return ", ".join("?" * count)


def _put_rows(
    conn: sqlite3.Connection, table: str, rows: Sequence[tuple[int, str, str]], vectors: Vector
) -> None:
    """Store ``vectors`` for ``(unit_id, kind, source)`` rows and log the change."""
    data = np.ascontiguousarray(vectors, dtype=np.float32)
    conn.executemany(
        f"INSERT OR REPLACE INTO {table} (unit_id, kind, source, embedding) VALUES (?, ?, ?, ?)",
        [(uid, kind, src, data[i].tobytes()) for i, (uid, kind, src) in enumerate(rows)],
    )
    log_changes(conn, [r[0] for r in rows])


def _delete_rows(conn: sqlite3.Connection, table: str, ids: Sequence[int]) -> None:
    # point deletes: vec0 answers `unit_id IN (...)` with a full scan
    conn.executemany(f"DELETE FROM {table} WHERE unit_id = ?", [(i,) for i in ids])
    log_changes(conn, ids)


class VecIndex:
    """Vectors stored in a sqlite-vec ``vec0`` virtual table, searched through the mirror."""

    name = "sqlite-vec"

    def __init__(self) -> None:
        self.mirror = VectorMirror(self)

    def create(self, conn: sqlite3.Connection, dimensions: int) -> None:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {VEC_TABLE} USING vec0("
            "unit_id INTEGER PRIMARY KEY, kind TEXT PARTITION KEY, source TEXT, "
            f"embedding FLOAT[{int(dimensions)}] distance_metric=cosine)"
        )

    def put(
        self, conn: sqlite3.Connection, rows: Sequence[tuple[int, str, str]], vectors: Vector
    ) -> None:
        _put_rows(conn, VEC_TABLE, rows, vectors)

    def delete(self, conn: sqlite3.Connection, ids: Sequence[int]) -> None:
        _delete_rows(conn, VEC_TABLE, ids)

    def search(
        self,
        conn: sqlite3.Connection,
        query: Vector,
        sources: Sequence[str],
        kind: UnitKind,
        limit: int,
    ) -> list[ScoredId]:
        return self.mirror.search(conn, query, sources, kind, limit)

    def read_rows(self, conn: sqlite3.Connection, ids: Sequence[int] | None) -> Iterable[StoredRow]:
        sql = f"SELECT unit_id, kind, source, embedding FROM {VEC_TABLE}"
        if ids is None:  # two scans: asking vec0 for all four columns at once is ~10x slower
            where = dict(
                (r[0], (r[1], r[2]))
                for r in conn.execute(f"SELECT unit_id, kind, source FROM {VEC_TABLE}")
            )
            return [
                (r[0], *where[r[0]], r[1])
                for r in conn.execute(f"SELECT unit_id, embedding FROM {VEC_TABLE}")
                if r[0] in where
            ]
        out = []
        for uid in ids:  # point lookups: `IN (...)` scans the whole vec0 table
            row = conn.execute(f"{sql} WHERE unit_id = ?", (uid,)).fetchone()
            if row is not None:
                out.append((row[0], row[1], row[2], row[3]))
        return out

    def get_ids(self, conn: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
        sql = f"SELECT 1 FROM {VEC_TABLE} WHERE unit_id = ?"
        return {uid for uid in ids if conn.execute(sql, (uid,)).fetchone() is not None}

    def get(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Vector]:
        return decode(self.read_rows(conn, ids))


class NumpyIndex:
    """Vectors stored as float32 BLOBs in ``unit_vectors``, searched through the mirror."""

    name = "numpy"

    def __init__(self) -> None:
        self.mirror = VectorMirror(self)

    def create(self, conn: sqlite3.Connection, dimensions: int) -> None:
        """The table exists from the first migration; nothing to create."""

    def put(
        self, conn: sqlite3.Connection, rows: Sequence[tuple[int, str, str]], vectors: Vector
    ) -> None:
        _put_rows(conn, "unit_vectors", rows, vectors)

    def delete(self, conn: sqlite3.Connection, ids: Sequence[int]) -> None:
        _delete_rows(conn, "unit_vectors", ids)

    def search(
        self,
        conn: sqlite3.Connection,
        query: Vector,
        sources: Sequence[str],
        kind: UnitKind,
        limit: int,
    ) -> list[ScoredId]:
        return self.mirror.search(conn, query, sources, kind, limit)

    def read_rows(self, conn: sqlite3.Connection, ids: Sequence[int] | None) -> Iterable[StoredRow]:
        sql = "SELECT unit_id, kind, source, embedding FROM unit_vectors"
        if ids is None:
            return conn.execute(sql)
        out: list[StoredRow] = []
        for start in range(0, len(ids), _BATCH):
            batch = list(ids[start : start + _BATCH])
            rows = conn.execute(f"{sql} WHERE unit_id IN ({_placeholders(len(batch))})", batch)
            out.extend((r[0], r[1], r[2], r[3]) for r in rows)
        return out

    def get(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Vector]:
        return decode(self.read_rows(conn, ids))

    def get_ids(self, conn: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
        found: set[int] = set()
        for start in range(0, len(ids), _BATCH):
            batch = list(ids[start : start + _BATCH])
            rows = conn.execute(
                f"SELECT unit_id FROM unit_vectors WHERE unit_id IN ({_placeholders(len(batch))})",
                batch,
            )
            found.update(r[0] for r in rows)
        return found
