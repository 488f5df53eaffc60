"""One unit kind's vectors in memory, and the two-stage search over them.

Owns ``UnitMatrix``: dense normalised float32 rows with their unit ids, source
codes and sign bits. A search ranks every admitted row by Hamming distance of
the sign bits, then rescores the nearest ``max(RESCORE_MIN, RESCORE_PER_RESULT
* limit)`` rows with exact float32 cosine, so the scores returned are exact.
Collections no larger than that budget are scored exactly. With a vector graph
attached (``graph.py``; large kinds only), the graph's nearest rows replace the
scan, joined by the rows changed since the graph was built, which get the sign-bit
pass among themselves. No SQL here: the ``VectorMirror`` fills matrices from the
database and attaches graphs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memdir.store.base import ScoredId
from memdir.store.vectors.codec import (
    Rows,
    Vector,
    hamming,
    nearest_rows,
    normalise_in_place,
    normalised,
    pack_signs,
)
from memdir.store.vectors.graph import GRAPH_CANDIDATES, Graph, GraphTag

RESCORE_MIN = 400  # candidates rescored exactly, at least ...
RESCORE_PER_RESULT = 20  # ... and this many per wanted result
GRAPH_PER_RESULT = 5  # graph answers per wanted result (at least GRAPH_CANDIDATES)
GRAPH_MIN_SHARE = 0.5  # a source filter admitting fewer rows than this share is scanned
GRAPH_MAX_CHANGED = 100_000  # more rows changed since the graph: scan until it is rebuilt


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
        self.graph: Graph | None = None
        self.graph_tag: GraphTag | None = None
        self._changed = np.zeros(0, dtype=np.bool_)  # per row: not in the graph as it is now
        self._changed_rows: Rows | None = None

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
        matrix._changed = np.zeros(len(ids), dtype=np.bool_)
        matrix._recentre()
        return matrix

    @property
    def nbytes(self) -> int:
        arrays = (self.ids, self.codes, self.vectors, self.signs)
        return sum(a.nbytes for a in arrays) + 100 * len(self._rows)

    def upsert(self, ids: Sequence[int], sources: Sequence[str], vectors: Vector) -> None:
        """Insert or replace rows (``vectors`` need not be normalised)."""
        if not ids:
            return
        self._forget()
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
        self._changed[at] = True
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
        self._changed[holes] = self._changed[movers]
        for row in holes.tolist():
            self._rows[int(self.ids[row])] = row
        self.count = kept
        self._forget()

    def search(self, query: Vector, sources: Sequence[str], limit: int) -> list[ScoredId]:
        """The ``limit`` rows of ``sources`` with the highest cosine to ``query``."""
        wanted = self._filter(sources)
        size = self.count if wanted is None else len(wanted)
        if size == 0 or limit <= 0:
            return []
        q = normalised(query)[0]
        budget = max(RESCORE_MIN, RESCORE_PER_RESULT * limit)
        if size <= budget:
            rows = np.arange(self.count) if wanted is None else wanted
        elif self._graph_serves(size):
            rows = self._graph_rows(q, sources, size, limit, budget)
        else:
            dist = hamming(self.signs[:, : self.count], pack_signs(q[None], self.centre))
            if wanted is not None:
                dist = dist[wanted]
            near = nearest_rows(dist, budget)
            rows = near if wanted is None else wanted[near]
        scores = self.vectors[rows] @ q
        top = np.argpartition(-scores, limit - 1)[:limit] if limit < len(rows) else None
        order = np.arange(len(rows)) if top is None else top
        order = order[np.argsort(-scores[order], kind="stable")]
        return [ScoredId(unit_id=int(self.ids[rows[i]]), score=float(scores[i])) for i in order]

    def _forget(self) -> None:
        """Drop what was derived from the rows as they were (filters, changed rows)."""
        self._filters.clear()
        self._changed_rows = None

    def attach_graph(self, graph: Graph, tag: GraphTag, changed_ids: Sequence[int]) -> None:
        """Search through ``graph`` from now on; ``changed_ids`` were written after it was
        built (their rows, and rows written from now on, are ranked beside the graph)."""
        self.graph, self.graph_tag = graph, tag
        self._changed[: self.count] = False
        rows = [self._rows[uid] for uid in changed_ids if uid in self._rows]
        self._changed[rows] = True
        self._changed_rows = None

    def detach_graph(self) -> None:
        self.graph = self.graph_tag = None

    def _graph_serves(self, size: int) -> bool:
        """Whether the attached graph answers a search over ``size`` admitted rows."""
        if self.graph is None or size < GRAPH_MIN_SHARE * self.count:
            return False
        return len(self._changed_since_graph()) <= GRAPH_MAX_CHANGED

    def _changed_since_graph(self) -> Rows:
        if self._changed_rows is None:
            self._changed_rows = np.flatnonzero(self._changed[: self.count])
        return self._changed_rows

    def _graph_rows(
        self, q: Vector, sources: Sequence[str], size: int, limit: int, budget: int
    ) -> Rows:
        """Rows to rescore: the graph's nearest that are unchanged since it was built, and
        the changed rows nearest by sign bits (all of them when few)."""
        assert self.graph is not None
        wanted = max(GRAPH_CANDIDATES, GRAPH_PER_RESULT * limit) * self.count // size
        keys = self.graph.search(q, wanted).tolist()
        found = np.fromiter((self._rows.get(k, -1) for k in keys), dtype=np.intp, count=len(keys))
        found = found[found >= 0]
        found = found[~self._changed[found]]
        changed = self._changed_since_graph()
        if size < self.count:
            codes = self._codes(sources)
            found = found[np.isin(self.codes[found], codes)]
            changed = changed[np.isin(self.codes[changed], codes)]
        if len(changed) > budget:
            dist = hamming(self.signs[:, changed], pack_signs(q[None], self.centre))
            changed = changed[nearest_rows(dist, budget)]
        return np.concatenate([found, changed])

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
        changed = np.zeros(capacity, dtype=np.bool_)
        changed[: self.count] = self._changed[: self.count]
        self._changed = changed
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
