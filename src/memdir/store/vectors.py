"""The two homes of unit vectors: a sqlite-vec ``vec0`` table or float32 BLOBs + numpy.

Both share one small interface so the store does not branch on the backend.
The backend is chosen when the first vector is stored and recorded in ``meta``;
an index keeps the backend it was built with.

* ``VecIndex``: ``vec0`` with cosine distance, ``kind`` as a partition key and
  ``source`` as a metadata column, so the KNN query filters inside sqlite-vec.
* ``NumpyIndex``: rows of ``unit_vectors``; search is a brute-force matrix
  product over an in-memory copy, reloaded when ``PRAGMA data_version`` or our
  own write counter says the table changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memdir.store.base import ScoredId, UnitKind

Vector = npt.NDArray[np.float32]
VEC_TABLE = "unit_vec"
VEC_MAX_K = 4096  # sqlite-vec's limit on k


class VectorIndex(Protocol):
    """Where unit vectors live; every method runs on the caller's connection."""

    name: str

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


class VecIndex:
    """Vectors in a sqlite-vec ``vec0`` virtual table (KNN inside SQLite)."""

    name = "sqlite-vec"

    def create(self, conn: sqlite3.Connection, dimensions: int) -> None:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {VEC_TABLE} USING vec0("
            "unit_id INTEGER PRIMARY KEY, kind TEXT PARTITION KEY, source TEXT, "
            f"embedding FLOAT[{int(dimensions)}] distance_metric=cosine)"
        )

    def put(
        self, conn: sqlite3.Connection, rows: Sequence[tuple[int, str, str]], vectors: Vector
    ) -> None:
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        conn.executemany(
            f"INSERT OR REPLACE INTO {VEC_TABLE} (unit_id, kind, source, embedding) "
            "VALUES (?, ?, ?, ?)",
            [(uid, kind, src, data[i].tobytes()) for i, (uid, kind, src) in enumerate(rows)],
        )

    def delete(self, conn: sqlite3.Connection, ids: Sequence[int]) -> None:
        # vec0 answers `unit_id IN (...)` with a full scan; point deletes are fast.
        conn.executemany(f"DELETE FROM {VEC_TABLE} WHERE unit_id = ?", [(i,) for i in ids])

    def search(
        self,
        conn: sqlite3.Connection,
        query: Vector,
        sources: Sequence[str],
        kind: UnitKind,
        limit: int,
    ) -> list[ScoredId]:
        k = min(limit, VEC_MAX_K)
        rows = conn.execute(
            f"SELECT unit_id, distance FROM {VEC_TABLE} WHERE embedding MATCH ? AND k = ? "
            f"AND kind = ? AND source IN ({_placeholders(len(sources))}) ORDER BY distance",
            (np.asarray(query, dtype=np.float32).tobytes(), k, kind, *sources),
        ).fetchall()
        return [ScoredId(unit_id=uid, score=1.0 - float(dist)) for uid, dist in rows]

    def get_ids(self, conn: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
        sql = f"SELECT 1 FROM {VEC_TABLE} WHERE unit_id = ?"
        return {uid for uid in ids if conn.execute(sql, (uid,)).fetchone() is not None}

    def get(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Vector]:
        out: dict[int, Vector] = {}
        for uid in ids:  # point lookups: `IN (...)` scans the whole vec0 table
            row = conn.execute(
                f"SELECT embedding FROM {VEC_TABLE} WHERE unit_id = ?", (uid,)
            ).fetchone()
            if row is not None:
                out[uid] = np.frombuffer(row[0], dtype=np.float32).copy()
        return out


@dataclass
class _Matrix:
    ids: npt.NDArray[np.int64]
    sources: npt.NDArray[np.str_]
    vectors: Vector  # rows L2-normalised
    masks: dict[tuple[str, ...], npt.NDArray[np.intp]]  # source filter -> row numbers


class NumpyIndex:
    """Vectors as float32 BLOBs in ``unit_vectors``; brute-force cosine with numpy."""

    name = "numpy"

    def __init__(self) -> None:
        self._cache: dict[str, _Matrix] = {}
        self._version: tuple[int, int] = (-1, -1)
        self._writes = 0

    def create(self, conn: sqlite3.Connection, dimensions: int) -> None:
        """The table exists from the first migration; nothing to create."""

    def put(
        self, conn: sqlite3.Connection, rows: Sequence[tuple[int, str, str]], vectors: Vector
    ) -> None:
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        conn.executemany(
            "INSERT OR REPLACE INTO unit_vectors (unit_id, kind, source, embedding) "
            "VALUES (?, ?, ?, ?)",
            [(uid, kind, src, data[i].tobytes()) for i, (uid, kind, src) in enumerate(rows)],
        )
        self._writes += 1

    def delete(self, conn: sqlite3.Connection, ids: Sequence[int]) -> None:
        conn.executemany("DELETE FROM unit_vectors WHERE unit_id = ?", [(i,) for i in ids])
        self._writes += 1

    def _matrix(self, conn: sqlite3.Connection, kind: str) -> _Matrix:
        version = (int(conn.execute("PRAGMA data_version").fetchone()[0]), self._writes)
        if version != self._version:
            self._cache.clear()
            self._version = version
        if kind not in self._cache:
            rows = conn.execute(
                "SELECT unit_id, source, embedding FROM unit_vectors WHERE kind = ?", (kind,)
            ).fetchall()
            ids = np.array([r[0] for r in rows], dtype=np.int64)
            sources = np.array([r[1] for r in rows], dtype=np.str_)
            if rows:
                matrix = np.vstack([np.frombuffer(r[2], dtype=np.float32) for r in rows])
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                np.divide(matrix, norms, out=matrix, where=norms > 0)
            else:
                matrix = np.zeros((0, 0), dtype=np.float32)
            self._cache[kind] = _Matrix(ids=ids, sources=sources, vectors=matrix, masks={})
        return self._cache[kind]

    def search(
        self,
        conn: sqlite3.Connection,
        query: Vector,
        sources: Sequence[str],
        kind: UnitKind,
        limit: int,
    ) -> list[ScoredId]:
        matrix = self._matrix(conn, kind)
        if len(matrix.ids) == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        scores = matrix.vectors @ (q / norm if norm > 0 else q)
        key = tuple(sorted(set(sources)))
        if key not in matrix.masks:
            wanted = np.array(list(key), dtype=np.str_)
            matrix.masks[key] = np.flatnonzero(np.isin(matrix.sources, wanted))
        candidates = matrix.masks[key]
        if len(candidates) == 0:
            return []
        picked = scores[candidates]
        if limit < len(candidates):
            top = np.argpartition(-picked, limit - 1)[:limit]
        else:
            top = np.arange(len(candidates))
        top = top[np.argsort(-picked[top], kind="stable")]
        return [
            ScoredId(unit_id=int(matrix.ids[candidates[i]]), score=float(picked[i])) for i in top
        ]

    def get(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Vector]:
        if not ids:
            return {}
        rows = conn.execute(
            f"SELECT unit_id, embedding FROM unit_vectors WHERE unit_id IN "
            f"({_placeholders(len(ids))})",
            list(ids),
        ).fetchall()
        return {uid: np.frombuffer(blob, dtype=np.float32).copy() for uid, blob in rows}

    def get_ids(self, conn: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
        found: set[int] = set()
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            rows = conn.execute(
                f"SELECT unit_id FROM unit_vectors WHERE unit_id IN ({_placeholders(len(batch))})",
                batch,
            )
            found.update(r[0] for r in rows)
        return found
