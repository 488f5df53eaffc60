"""One unit kind's vectors in memory, and the two-stage search over them.

Owns ``UnitMatrix``: dense normalised float32 rows with their unit ids, source
codes and sign bits. A search ranks every admitted row by Hamming distance of
the sign bits, then rescores the nearest ``max(RESCORE_MIN, RESCORE_PER_RESULT
* limit)`` rows with exact float32 cosine, so the scores returned are exact.
Collections no larger than that budget are scored exactly. No SQL here: the
``VectorSearch`` engine fills matrices from the database.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memdir.store.contracts import ScoredId
from memdir.store.sqlite.vectors.codec import (
    Rows,
    Vector,
    hamming,
    nearest_rows,
    normalise_in_place,
    normalised,
    pack_signs,
)

RESCORE_MIN = 400  # candidates rescored exactly, at least ...
RESCORE_PER_RESULT = 20  # ... and this many per wanted result


class UnitMatrix:
    """One kind's vectors in memory: normalised float32 rows, sign bits, ids, sources.

    Rows are dense (a delete moves the last rows into the holes); arrays grow
    geometrically. The centre (mean vector) is recomputed, and every sign
    re-packed, each time the row count doubles, so appends stay amortised O(1).
    """

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.count = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.codes = np.zeros(0, dtype=np.int32)  # source code per row
        self.vectors = np.zeros((0, dimensions), dtype=np.float32)
        self.signs = np.zeros(((dimensions + 63) // 64, 0), dtype=np.uint64)
        self.centre = np.zeros(dimensions, dtype=np.float32)
        self._centred_at = 0
        self._rows: dict[int, int] = {}
        self._code_of: dict[str, int] = {}
        self._filters: dict[tuple[str, ...], Rows | None] = {}

    @classmethod
    def from_rows(cls, ids: list[int], sources: list[str], vectors: Vector) -> UnitMatrix:
        """A matrix over ``vectors`` (a writable array it takes over and normalises in place)."""
        matrix = cls(vectors.shape[1])
        normalise_in_place(vectors)
        matrix.vectors = vectors
        matrix.ids = np.array(ids, dtype=np.int64)
        matrix.codes = np.array([matrix._code(s) for s in sources], dtype=np.int32)
        matrix.count = len(ids)
        matrix._rows = dict(zip(ids, range(len(ids)), strict=True))
        matrix.signs = np.zeros((len(matrix.signs), len(ids)), dtype=np.uint64)
        matrix._recentre()
        return matrix

    @property
    def nbytes(self) -> int:
        arrays = (self.ids, self.codes, self.vectors, self.signs)
        return sum(a.nbytes for a in arrays) + 100 * len(self._rows)

    def __contains__(self, unit_id: int) -> bool:
        return unit_id in self._rows

    def upsert(self, ids: Sequence[int], sources: Sequence[str], vectors: Vector) -> None:
        """Insert or replace rows (``vectors`` need not be normalised)."""
        if not ids:
            return
        self._filters.clear()
        data = normalised(vectors)
        at = np.array([self._rows.get(uid, -1) for uid in ids], dtype=np.intp)
        fresh = np.flatnonzero(at < 0)
        self._reserve(self.count + len(fresh))
        at[fresh] = np.arange(self.count, self.count + len(fresh))
        self.count += len(fresh)
        for row, uid in zip(at[fresh].tolist(), np.asarray(ids)[fresh].tolist(), strict=True):
            self._rows[uid] = row
        self.ids[at] = ids
        self.codes[at] = [self._code(s) for s in sources]
        self.vectors[at] = data
        if self.count >= 2 * self._centred_at:
            self._recentre()
        else:
            self.signs[:, at] = pack_signs(data, self.centre)

    def remove(self, ids: Sequence[int]) -> None:
        """Drop rows by unit id (unknown ids are ignored)."""
        gone = np.array(sorted({self._rows.pop(u) for u in ids if u in self._rows}), np.intp)
        if len(gone) == 0:
            return
        kept = self.count - len(gone)
        holes = gone[gone < kept]
        movers = np.setdiff1d(np.arange(kept, self.count), gone, assume_unique=True)
        self.ids[holes] = self.ids[movers]
        self.codes[holes] = self.codes[movers]
        self.vectors[holes] = self.vectors[movers]
        self.signs[:, holes] = self.signs[:, movers]
        for row in holes.tolist():
            self._rows[int(self.ids[row])] = row
        self.count = kept
        self._filters.clear()

    def search(self, query: Vector, sources: Sequence[str], limit: int) -> list[ScoredId]:
        """The ``limit`` rows of ``sources`` with the highest cosine to ``query``."""
        q = normalised(query)[0]
        rows = self.nearest(q, sources, max(RESCORE_MIN, RESCORE_PER_RESULT * limit))
        return best_of(self.ids[rows], self.vectors[rows] @ q, limit)

    def nearest(self, q: Vector, sources: Sequence[str], budget: int) -> Rows:
        """Rows of ``sources`` worth rescoring for the normalised ``q``: the ``budget``
        nearest by sign bits (every admitted row when there are no more)."""
        wanted = self._filter(sources)
        size = self.count if wanted is None else len(wanted)
        if size <= budget:
            return np.arange(self.count) if wanted is None else wanted
        dist = hamming(self.signs[:, : self.count], pack_signs(q[None], self.centre))
        if wanted is not None:
            dist = dist[wanted]
        near = nearest_rows(dist, budget)
        return near if wanted is None else wanted[near]

    def _filter(self, sources: Sequence[str]) -> Rows | None:
        """Row numbers whose source is in ``sources``; None when that is every row."""
        key = tuple(sorted(set(sources)))
        if key not in self._filters:
            mask = np.isin(self.codes[: self.count], self._codes(key))
            self._filters[key] = None if bool(mask.all()) else np.flatnonzero(mask)
        return self._filters[key]

    def _codes(self, sources: Sequence[str]) -> npt.NDArray[np.int32]:
        """The codes of those of ``sources`` that this matrix has seen."""
        return np.array([self._code_of[s] for s in sources if s in self._code_of], np.int32)

    def _code(self, source: str) -> int:
        return self._code_of.setdefault(source, len(self._code_of))

    def _reserve(self, size: int) -> None:
        capacity = len(self.ids)
        if size <= capacity:
            return
        capacity = max(size, capacity + capacity // 2, 256)
        self.ids = np.resize(self.ids, capacity)
        self.codes = np.resize(self.codes, capacity)
        vectors = np.zeros((capacity, self.dimensions), dtype=np.float32)
        vectors[: self.count] = self.vectors[: self.count]
        self.vectors = vectors
        signs = np.zeros((len(self.signs), capacity), dtype=np.uint64)
        signs[:, : self.count] = self.signs[:, : self.count]
        self.signs = signs

    def _recentre(self) -> None:
        live = self.vectors[: self.count]
        self.centre = live.mean(axis=0, dtype=np.float64).astype(np.float32)
        self.signs[:, : self.count] = pack_signs(live, self.centre)
        self._centred_at = self.count


def best_of(
    ids: npt.NDArray[np.int64], scores: npt.NDArray[np.float32], limit: int
) -> list[ScoredId]:
    """The ``limit`` highest ``scores`` with their ids, best first (stable among ties)."""
    if limit <= 0 or len(ids) == 0:
        return []
    top = np.argpartition(-scores, limit - 1)[:limit] if limit < len(ids) else None
    order = np.arange(len(ids)) if top is None else top
    order = order[np.argsort(-scores[order], kind="stable")]
    return [ScoredId(unit_id=int(ids[i]), score=float(scores[i])) for i in order]
