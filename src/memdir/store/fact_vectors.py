"""Fact vectors in memory: decoded from ``fact_vectors`` BLOBs and searched by exact cosine.

Owns the float32 BLOB encoding of a fact's embedding and ``FactMatrix``, one
scope's normalised vectors with their fact ids, which ``SqliteFactStore``
reloads only when the database changed (``PRAGMA data_version`` or its own
writes). The scan is exact: an agent has a few thousand facts, not millions.
No SQL here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memdir.store.fact_records import Vector


def vector_blob(vector: Vector) -> bytes:
    """A vector as the float32 BLOB ``fact_vectors.embedding`` holds."""
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


@dataclass
class FactMatrix:
    """One scope's fact vectors, L2-normalised rows in fact order, as of ``version``."""

    version: tuple[int, int]
    ids: list[str]
    vectors: Vector

    @classmethod
    def from_rows(cls, version: tuple[int, int], rows: Sequence[tuple[str, bytes]]) -> FactMatrix:
        """A matrix over ``(fact id, float32 blob)`` rows."""
        if rows:
            vectors = np.vstack([np.frombuffer(blob, dtype=np.float32) for _, blob in rows])
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            np.divide(vectors, norms, out=vectors, where=norms > 0)
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        return cls(version, [r[0] for r in rows], vectors)

    def search(self, query: Vector, allowed: set[str], limit: int) -> list[tuple[str, float]]:
        """(fact id, cosine) of the ``limit`` facts in ``allowed`` nearest ``query``, best first."""
        rows = np.array([i for i, fid in enumerate(self.ids) if fid in allowed], dtype=np.intp)
        if len(rows) == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        scores = self.vectors[rows] @ (q / norm if norm > 0 else q)
        order = np.argsort(-scores, kind="stable")[:limit]
        return [(self.ids[rows[i]], float(scores[i])) for i in order]
