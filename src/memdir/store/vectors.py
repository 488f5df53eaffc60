"""Where unit vectors live (a sqlite-vec ``vec0`` table or float32 BLOBs) and how they are searched.

Storage: both backends share one small interface so the store does not branch.
The backend is chosen when the first vector is stored and recorded in ``meta``;
an index keeps the backend it was built with.

* ``VecIndex``: a sqlite-vec ``vec0`` table (``kind`` partition key, ``source`` column).
* ``NumpyIndex``: rows of the plain ``unit_vectors`` table (no extension needed).

Search, for both: an exact float32 scan of 100k x 384 vectors is memory-bandwidth
bound (10-100 ms), so each process keeps a ``VectorMirror``: per unit kind, the
L2-normalised float32 rows plus one sign bit per dimension of the row minus the
kind's mean vector (384 bits = 48 bytes). A query ranks all rows by Hamming
distance of the sign bits (XOR + popcount over a few MB), then rescores the
nearest ``max(RESCORE_MIN, RESCORE_PER_RESULT * limit)`` rows with exact float32
cosine; scores returned are exact cosines. Collections no larger than that budget
are scored exactly.

Freshness: every ``put``/``delete`` appends the touched unit ids to
``vector_log`` (created with the schema) inside the writer's transaction. Before a search
the mirror reads the log's high-water mark (one small query); new entries are
re-read by id and applied in place, so writes of this and other processes are
seen without a full reload. ``clear`` bumps ``meta.vector_epoch``, which forces
a full reload, as does a log pruned past what the mirror has seen.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memdir.store.base import ScoredId, UnitKind

Vector = npt.NDArray[np.float32]
Signs = npt.NDArray[np.uint64]
Rows = npt.NDArray[np.intp]
StoredRow = tuple[int, str, str, bytes]  # (unit_id, kind, source, float32 blob)

VEC_TABLE = "unit_vec"
EPOCH_KEY = "vector_epoch"
RESCORE_MIN = 400  # candidates rescored exactly, at least ...
RESCORE_PER_RESULT = 20  # ... and this many per wanted result
LOG_KEEP = 50_000  # newest vector_log entries kept; older readers reload in full
RELOAD_SHARE = 0.25  # more changed ids than this share of the mirror: reload in full
_BLOCK_ROWS = 8192  # rows packed at a time (bounds the temporary copies)


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


class StoredVectors(Protocol):
    """How a mirror reads the rows of its backend's table."""

    def read_rows(self, conn: sqlite3.Connection, ids: Sequence[int] | None) -> Iterable[StoredRow]:
        """Rows for ``ids`` (absent ids are missing), or every row when ``ids`` is None."""
        ...


def _placeholders(count: int) -> str:
    return ", ".join("?" * count)


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


def pack_signs(vectors: Vector, centre: Vector) -> Signs:
    """Sign bits of ``vectors - centre``, word-major: shape (words, rows), uint64."""
    words = (vectors.shape[1] + 63) // 64
    out = np.empty((words, len(vectors)), dtype=np.uint64)
    for start in range(0, len(vectors), _BLOCK_ROWS):
        block = vectors[start : start + _BLOCK_ROWS]
        bits = np.packbits(block > centre, axis=1)
        padded = np.zeros((len(block), words * 8), dtype=np.uint8)
        padded[:, : bits.shape[1]] = bits
        out[:, start : start + len(block)] = padded.view(np.uint64).T
    return out


def hamming(signs: Signs, query: Signs) -> npt.NDArray[np.uint16]:
    """Hamming distance of every column of ``signs`` to the one-column ``query``."""
    dist: npt.NDArray[np.uint16] = np.bitwise_count(signs[0] ^ query[0]).astype(np.uint16)
    for word in range(1, len(signs)):
        dist += np.bitwise_count(signs[word] ^ query[word])
    return dist


def _normalised(vectors: npt.ArrayLike) -> Vector:
    out = np.array(vectors, dtype=np.float32, ndmin=2)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


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
        for start in range(0, len(vectors), _BLOCK_ROWS):
            block = vectors[start : start + _BLOCK_ROWS]
            norms = np.sqrt(np.einsum("ij,ij->i", block, block))[:, None]
            np.divide(block, norms, out=block, where=norms > 0)
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

    def upsert(self, ids: Sequence[int], sources: Sequence[str], vectors: Vector) -> None:
        """Insert or replace rows (``vectors`` need not be normalised)."""
        if not ids:
            return
        data = _normalised(vectors)
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
        self._filters.clear()

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
        wanted = self._filter(sources)
        size = self.count if wanted is None else len(wanted)
        if size == 0 or limit <= 0:
            return []
        q = _normalised(query)[0]
        budget = max(RESCORE_MIN, RESCORE_PER_RESULT * limit)
        if size <= budget:
            rows = np.arange(self.count) if wanted is None else wanted
        else:
            dist = hamming(self.signs[:, : self.count], pack_signs(q[None], self.centre))
            if wanted is not None:
                dist = dist[wanted]
            near = np.argpartition(dist, budget - 1)[:budget]
            rows = near if wanted is None else wanted[near]
        scores = self.vectors[rows] @ q
        top = np.argpartition(-scores, limit - 1)[:limit] if limit < len(rows) else None
        order = np.arange(len(rows)) if top is None else top
        order = order[np.argsort(-scores[order], kind="stable")]
        return [ScoredId(unit_id=int(self.ids[rows[i]]), score=float(scores[i])) for i in order]

    def _filter(self, sources: Sequence[str]) -> Rows | None:
        """Row numbers whose source is in ``sources``; None when that is every row."""
        key = tuple(sorted(set(sources)))
        if key not in self._filters:
            codes = [self._code_of[s] for s in key if s in self._code_of]
            mask = np.isin(self.codes[: self.count], np.array(codes, dtype=np.int32))
            self._filters[key] = None if bool(mask.all()) else np.flatnonzero(mask)
        return self._filters[key]

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


_STATE_SQL = (
    "SELECT (SELECT value FROM meta WHERE key = ?), "
    "(SELECT min(seq) FROM vector_log), (SELECT max(seq) FROM vector_log)"
)


class VectorMirror:
    """This process's in-memory copy of a backend's vectors, kept fresh by ``vector_log``."""

    def __init__(self, stored: StoredVectors) -> None:
        self._stored = stored
        self._kinds: dict[str, UnitMatrix] = {}
        self._state: tuple[str, int] | None = None  # (epoch, last log seq applied)
        self.full_loads = 0

    @property
    def nbytes(self) -> int:
        """Memory held by the mirror's arrays (about 1.6 KB per 384-d vector)."""
        return sum(m.nbytes for m in self._kinds.values())

    def search(
        self,
        conn: sqlite3.Connection,
        query: Vector,
        sources: Sequence[str],
        kind: UnitKind,
        limit: int,
    ) -> list[ScoredId]:
        self.refresh(conn)
        matrix = self._kinds.get(kind)
        return [] if matrix is None else matrix.search(query, sources, limit)

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Apply the vector writes logged since the last refresh (one snapshot)."""
        own = not conn.in_transaction
        if own:
            conn.execute("BEGIN")
        try:
            epoch, low, high = conn.execute(_STATE_SQL, (EPOCH_KEY,)).fetchone()
            state = (str(epoch or ""), int(high or 0))
            seen = self._state
            if seen is None or seen[0] != state[0] or state[1] < seen[1]:
                self._load_all(conn)
            elif low is not None and low > seen[1] + 1:
                self._load_all(conn)  # the log was pruned past what we have seen
            elif state[1] > seen[1]:
                self._apply(conn, seen[1])
            self._state = state
        finally:
            if own:
                conn.execute("COMMIT")

    def _apply(self, conn: sqlite3.Connection, after: int) -> None:
        ids = [
            r[0]
            for r in conn.execute("SELECT DISTINCT unit_id FROM vector_log WHERE seq > ?", (after,))
        ]
        size = sum(m.count for m in self._kinds.values())
        if len(ids) > RELOAD_SHARE * size + 1000:
            self._load_all(conn)
            return
        rows = self._stored.read_rows(conn, ids)
        for matrix in self._kinds.values():
            matrix.remove(ids)
        self._insert(rows)

    def _load_all(self, conn: sqlite3.Connection) -> None:
        self._kinds = {}
        by_kind: dict[str, tuple[list[int], list[str], bytearray]] = {}
        for uid, kind, source, blob in self._stored.read_rows(conn, None):
            ids, sources, data = by_kind.setdefault(kind, ([], [], bytearray()))
            ids.append(uid)
            sources.append(source)
            data += blob
        for kind, (ids, sources, data) in by_kind.items():
            vectors = np.frombuffer(data, dtype=np.float32).reshape(len(ids), -1)
            self._kinds[kind] = UnitMatrix.from_rows(ids, sources, vectors)
        self.full_loads += 1

    def _insert(self, rows: Iterable[StoredRow]) -> None:
        by_kind: dict[str, list[StoredRow]] = defaultdict(list)
        for row in rows:
            by_kind[row[1]].append(row)
        for kind, group in by_kind.items():
            vectors = np.frombuffer(b"".join(r[3] for r in group), dtype=np.float32)
            vectors = vectors.reshape(len(group), -1)
            matrix = self._kinds.setdefault(kind, UnitMatrix(vectors.shape[1]))
            matrix.upsert([r[0] for r in group], [r[2] for r in group], vectors)


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


def _decode(rows: Iterable[StoredRow]) -> dict[int, Vector]:
    return {r[0]: np.frombuffer(r[3], dtype=np.float32).copy() for r in rows}


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
        return _decode(self.read_rows(conn, ids))


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
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            rows = conn.execute(f"{sql} WHERE unit_id IN ({_placeholders(len(batch))})", batch)
            out.extend((r[0], r[1], r[2], r[3]) for r in rows)
        return out

    def get(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Vector]:
        return _decode(self.read_rows(conn, ids))

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
