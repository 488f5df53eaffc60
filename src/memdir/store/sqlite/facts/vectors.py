"""The facts' vector engine: each scope's fact vectors held in memory, following the vector
log (``f003_vector_log``), scanned exactly (an agent has thousands of facts, not millions).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memdir.errors import IndexMismatchError
from memdir.store.fact_records import Vector
from memdir.store.sqlite.facts.sql import marks


def vector_blob(vector: Vector) -> bytes:
    """A vector as the float32 BLOB ``fact_vectors.embedding`` holds."""
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


@dataclass
class FactMatrix:
    """One scope's fact vectors, L2-normalised rows in fact-number order, as of the
    vector log's entry ``seq``. The scan is exact: an agent has a few thousand facts,
    not millions."""

    seq: int
    nums: npt.NDArray[np.int64]
    ids: list[str]
    vectors: Vector

    @classmethod
    def read(cls, conn: sqlite3.Connection, source: str, held: FactMatrix | None) -> FactMatrix:
        """The vectors of ``scope`` on ``conn`` (one snapshot): ``held`` itself when no
        vector changed since it was read, else ``held`` with the changed rows re-read,
        or all rows when the log no longer reaches back to it."""
        snapshot = not conn.in_transaction
        if snapshot:
            conn.execute("BEGIN")
        try:
            return cls._read(conn, source, held)
        finally:
            if snapshot:
                conn.execute("COMMIT")

    @classmethod
    def _read(cls, conn: sqlite3.Connection, source: str, held: FactMatrix | None) -> FactMatrix:
        top = int(conn.execute("SELECT max(seq) FROM fact_vector_log").fetchone()[0] or 0)
        if held is not None and held.seq == top:
            return held
        low = conn.execute("SELECT min(seq) FROM fact_vector_log").fetchone()[0]
        sql = (
            "SELECT v.num, f.id, v.embedding FROM fact_vectors v JOIN facts f ON f.num = v.num "
            "WHERE f.scope = ?"
        )
        if held is None or low is None or int(low) > held.seq + 1:  # the log was pruned
            return cls.of_rows(top, conn.execute(f"{sql} ORDER BY v.num", (source,)).fetchall())
        changed = [r[0] for r in conn.execute(
            "SELECT DISTINCT num FROM fact_vector_log WHERE seq > ?", (held.seq,))]  # fmt: skip
        rows: list[tuple[int, str, bytes]] = []
        for start in range(0, len(changed), 500):
            batch = changed[start : start + 500]
            args = (source, *batch)
            rows += conn.execute(f"{sql} AND v.num IN ({marks(len(batch))})", args).fetchall()
        keep = ~np.isin(held.nums, np.array(changed, dtype=np.int64))
        fresh = cls.of_rows(top, rows)
        if len(fresh.ids) and len(held.ids) and fresh.vectors.shape[1] != held.vectors.shape[1]:
            keep[:] = False  # another embedder: every vector was rewritten, and is in ``rows``
        nums = np.concatenate([held.nums[keep], fresh.nums])
        order = np.argsort(nums, kind="stable")
        ids = [held.ids[i] for i in np.flatnonzero(keep)] + fresh.ids
        parts = [m for m in (held.vectors[keep] if keep.any() else None, fresh.vectors)
                 if m is not None and len(m)]  # fmt: skip
        vectors = np.vstack(parts)[order] if parts else np.zeros((0, 0), dtype=np.float32)
        return cls(top, nums[order], [ids[i] for i in order], vectors)

    @classmethod
    def of_rows(cls, seq: int, rows: Sequence[tuple[int, str, bytes]]) -> FactMatrix:
        """A matrix over ``(fact number, fact id, float32 blob)`` rows, in number order."""
        rows = sorted(rows)
        if rows:
            vectors = np.vstack([np.frombuffer(blob, dtype=np.float32) for _, _, blob in rows])
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            np.divide(vectors, norms, out=vectors, where=norms > 0)
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        nums = np.array([r[0] for r in rows], dtype=np.int64)
        return cls(seq, nums, [r[1] for r in rows], vectors)

    def search(self, query: Vector, allowed: set[str], limit: int) -> list[tuple[str, float]]:
        """(fact id, cosine) of the ``limit`` facts in ``allowed`` nearest ``query``, best first."""
        admitted = np.fromiter((fid in allowed for fid in self.ids), bool, len(self.ids))
        rows = np.flatnonzero(admitted)
        if len(rows) == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        scores = (self.vectors @ (q / norm if norm > 0 else q))[rows]  # no copy of the rows
        order = np.argsort(-scores, kind="stable")[:limit]
        return [(self.ids[rows[i]], float(scores[i])) for i in order]


def check_dimensions(
    conn: sqlite3.Connection, path: Path, vectors: dict[str, tuple[str, Vector]]
) -> None:
    """Refuse vectors whose dimensions differ from the recorded embedder's (the facts were
    rebuilt with another embedder since this store read its identity)."""
    row = conn.execute("SELECT value FROM fact_meta WHERE key = 'dimensions'").fetchone()
    if row is None:
        return
    for _, vector in vectors.values():
        if int(np.asarray(vector).shape[-1]) != int(row[0]):
            raise IndexMismatchError(
                f"the facts in {str(path)!r} now hold {row[0]}-dimensional vectors, not "
                f"{np.asarray(vector).shape[-1]}; another process rebuilt them with another "
                "embedder: restart this one, or run `memdir index rebuild`"
            )
