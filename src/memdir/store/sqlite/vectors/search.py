"""``VectorSearch``: the engine that answers vector searches over the units' vectors.

It owns the vectors table (``embeddings``: each vector once, keyed by the embedded
text's hash; ``units.vector_id`` points a unit at its row) and this process's copy
of what its searches need, kept fresh through the change log (``changelog.py``).
Per unit kind that copy is either

* every row, in a ``UnitMatrix`` (sign-bit prefilter, exact rescoring); or, when a
  vector graph serves the kind (``graph.py``, large kinds only),
* the rows of files changed since the graph was built: a search asks the graph for
  its nearest rows, fetches their vectors by id, and ranks them with the changed
  rows' own nearest, all rescored exactly. A source filter admitting less than
  ``GRAPH_MIN_SHARE`` of the graph's rows is answered from a copy of those sources'
  rows, read on first use.

Scores returned are exact cosines either way. Every method runs on the caller's
connection (the store's vector connection) inside a read transaction.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memdir.store.contracts import UNIT_KINDS, ScoredId, UnitKind
from memdir.store.sqlite.changelog import LogState, Position, changed_since, log_state
from memdir.store.sqlite.vectors.codec import Vector, normalised
from memdir.store.sqlite.vectors.graph import (
    GRAPH_CANDIDATES,
    GRAPH_MIN_SHARE,
    GRAPH_PER_RESULT,
    Graph,
    GraphTag,
    open_graph,
    read_tags,
)
from memdir.store.sqlite.vectors.matrix import RESCORE_MIN, RESCORE_PER_RESULT, UnitMatrix, best_of

BATCH = 500  # ids per `IN (...)` query
Row = tuple[int, int, str, int]  # (file id, unit id, source, vector id)


@dataclass
class Held:
    """The rows of one kind this process holds: all of them, or (``changed_only``) those
    of files changed since the graph, or (``sources``) those of some sources only."""

    kind: str
    changed_only: bool = False
    sources: tuple[str, ...] | None = None
    matrix: UnitMatrix | None = None
    files: dict[int, dict[int, int]] = field(default_factory=dict)  # file -> unit -> vector

    def admits(self, source: str) -> bool:
        return self.sources is None or source in self.sources

    def search(self, query: Vector, sources: Sequence[str], limit: int) -> list[ScoredId]:
        return [] if self.matrix is None else self.matrix.search(query, sources, limit)


class VectorSearch:
    """Vector search over one index (``graph_min_rows``: see ``graph.py``; 0: no graphs)."""

    def __init__(self, database: Path | None) -> None:
        self.database = database
        self.position: Position | None = None
        self.full_loads = 0
        self._held: dict[str, Held] = {}
        self._narrow: dict[tuple[str, tuple[str, ...]], Held] = {}
        self._graphs: dict[str, tuple[GraphTag, Graph]] = {}
        self._tags: dict[str, GraphTag | None] = {}  # the tag each kind was loaded with
        self._unreadable: set[GraphTag] = set()  # graph files that failed to open (warned once)

    @property
    def files_held(self) -> int:
        return sum(len(h.files) for h in self._everything())

    @property
    def nbytes(self) -> int:
        """Memory held by the copies' arrays (about 1.6 KB per 384-d vector)."""
        return sum(h.matrix.nbytes for h in self._everything() if h.matrix is not None)

    def _everything(self) -> Iterator[Held]:
        yield from self._held.values()
        yield from self._narrow.values()

    # -- following the tables ------------------------------------------------------------

    def reload(self, conn: sqlite3.Connection) -> None:
        """Read again what the searches need: per kind, its rows or its graph's changes."""
        self.full_loads += 1
        self._held, self._narrow, self._graphs, self._tags = {}, {}, {}, {}
        now = log_state(conn)
        tags = read_tags(conn)
        for kind in UNIT_KINDS:
            self._held[kind] = self._load_kind(conn, kind, tags.get(kind), now)

    def _load_kind(
        self, conn: sqlite3.Connection, kind: str, tag: GraphTag | None, now: LogState
    ) -> Held:
        self._tags[kind] = tag
        self._graphs.pop(kind, None)
        graph = self._open(tag, now)
        if tag is None or graph is None:
            held = Held(kind)
            _fill(held, conn, "u.kind = ?", [kind])
            return held
        self._graphs[kind] = (tag, graph)
        held = Held(kind, changed_only=True)
        for batch in _batches(changed_since(conn, tag.seq)):
            _fill(held, conn, f"u.kind = ? AND u.file_id IN ({_marks(batch)})", [kind, *batch])
        return held

    def _open(self, tag: GraphTag | None, now: LogState) -> Graph | None:
        if tag is None or self.database is None or tag in self._unreadable:
            return None
        if not now.reaches(tag.position):
            return None  # the log no longer says what changed since: rebuilt by the next sync
        graph = open_graph(self.database, tag)
        if graph is None:
            self._unreadable.add(tag)
        return graph

    def apply(self, conn: sqlite3.Connection, file_ids: list[int]) -> None:
        """Re-read the units of changed files; follow graphs built or dropped meanwhile."""
        tags = read_tags(conn)
        now = log_state(conn)
        for kind in UNIT_KINDS:
            if tags.get(kind) != self._tags.get(kind):  # a graph was built or dropped
                self._held[kind] = self._load_kind(conn, kind, tags.get(kind), now)
                self._narrow = {k: v for k, v in self._narrow.items() if k[0] != kind}
        rows: list[tuple[int, int, str, int, str]] = []
        for batch in _batches(file_ids):
            rows += conn.execute(
                "SELECT u.file_id, u.id, u.source, u.vector_id, u.kind FROM units u "
                f"WHERE u.file_id IN ({_marks(batch)}) AND u.vector_id IS NOT NULL",
                batch,
            ).fetchall()
        for held in self._everything():
            mine = [r[:4] for r in rows if r[4] == held.kind and held.admits(r[2])]
            _update(held, file_ids, mine, conn)

    # -- searching -----------------------------------------------------------------------

    def search(
        self,
        conn: sqlite3.Connection,
        query: Vector,
        sources: Sequence[str],
        kind: UnitKind,
        limit: int,
    ) -> list[ScoredId]:
        """The ``limit`` units of ``kind`` in ``sources`` nearest ``query`` (exact cosines)."""
        held = self._held.get(kind)
        if held is None or limit <= 0 or not sources:
            return []
        graph = self._graphs.get(kind)
        if graph is None:
            return held.search(query, sources, limit)
        tag, index = graph
        share = tag.share(sources)
        if share < GRAPH_MIN_SHARE:
            return self._narrowed(conn, kind, sources).search(query, sources, limit)
        q = normalised(query)[0]
        budget = max(RESCORE_MIN, RESCORE_PER_RESULT * limit)
        wanted = int(max(GRAPH_CANDIDATES, GRAPH_PER_RESULT * limit) / max(share, 1e-9))
        changed = held.matrix
        keys = [k for k in index.search(q, wanted).tolist() if changed is None or k not in changed]
        ids, vectors = _fetch(conn, keys, set(sources))
        scores = [vectors @ q] if len(ids) else []
        found = [ids] if len(ids) else []
        if changed is not None and changed.count:
            rows = changed.nearest(q, sources, budget)
            found.append(changed.ids[rows])
            scores.append(changed.vectors[rows] @ q)
        if not found:
            return []
        return best_of(np.concatenate(found), np.concatenate(scores), limit)

    def _narrowed(self, conn: sqlite3.Connection, kind: str, sources: Sequence[str]) -> Held:
        key = (kind, tuple(sorted(set(sources))))
        held = self._narrow.get(key)
        if held is None:
            held = self._narrow[key] = Held(kind, sources=key[1])
            _fill(held, conn, f"u.kind = ? AND u.source IN ({_marks(key[1])})", [kind, *key[1]])
        return held

    def get(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Vector]:
        """Unit id -> its stored vector (a writable copy); ids without one are absent."""
        out: dict[int, Vector] = {}
        for batch in _batches(list(ids)):
            rows = conn.execute(
                "SELECT u.id, e.vector FROM units u JOIN embeddings e ON e.id = u.vector_id "
                f"WHERE u.id IN ({_marks(batch)})",
                batch,
            )
            out.update((uid, np.frombuffer(blob, dtype=np.float32).copy()) for uid, blob in rows)
        return out


def _marks(items: Sequence[object]) -> str:
    return ", ".join("?" * len(items))


def _batches(items: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(items), BATCH):
        yield list(items[start : start + BATCH])


def _fill(held: Held, conn: sqlite3.Connection, where: str, args: Sequence[object]) -> None:
    """Take in the units with a vector that ``where`` selects (none of them held yet)."""
    sql = (
        "SELECT u.file_id, u.id, u.source, u.vector_id, e.vector FROM units u "
        f"JOIN embeddings e ON e.id = u.vector_id WHERE {where} ORDER BY u.id"
    )
    ids: list[int] = []
    sources: list[str] = []
    data = bytearray()
    for file_id, unit_id, source, vector_id, blob in conn.execute(sql, list(args)):
        held.files.setdefault(file_id, {})[unit_id] = vector_id
        ids.append(unit_id)
        sources.append(source)
        data += blob
    if not ids:
        return
    vectors = np.frombuffer(data, dtype=np.float32).reshape(len(ids), -1)
    if held.matrix is None:
        held.matrix = UnitMatrix.from_rows(ids, sources, vectors)
    else:
        held.matrix.upsert(ids, sources, vectors)


def _update(held: Held, file_ids: Sequence[int], rows: list[Row], conn: sqlite3.Connection) -> None:
    """Bring the rows of ``file_ids`` to ``rows`` (their current rows for this copy):
    only units that are new, or point at another vector, are read."""
    now: dict[int, dict[int, int]] = defaultdict(dict)
    for file_id, unit_id, _, vector_id in rows:
        now[file_id][unit_id] = vector_id
    gone: list[int] = []
    fresh: list[int] = []
    for file_id in file_ids:
        before = held.files.pop(file_id, {})
        after = now.get(file_id, {})
        gone += [u for u, v in before.items() if after.get(u) != v]
        fresh += [u for u, v in after.items() if before.get(u) != v]
        kept = {u: v for u, v in after.items() if before.get(u) == v}
        if kept:
            held.files[file_id] = kept
    if held.matrix is not None:
        held.matrix.remove(gone)
    for batch in _batches(sorted(fresh)):
        _fill(held, conn, f"u.id IN ({_marks(batch)})", batch)


def _fetch(
    conn: sqlite3.Connection, ids: Sequence[int], sources: set[str]
) -> tuple[np.ndarray, Vector]:
    """The vectors of units ``ids`` of ``sources`` (gone units are left out)."""
    found: list[int] = []
    blobs: list[bytes] = []
    for batch in _batches(list(ids)):
        rows = conn.execute(
            "SELECT u.id, u.source, e.vector FROM units u JOIN embeddings e "
            f"ON e.id = u.vector_id WHERE u.id IN ({_marks(batch)})",
            batch,
        )
        for uid, source, blob in rows:
            if source in sources:
                found.append(int(uid))
                blobs.append(blob)
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    vectors = normalised(np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(found), -1))
    return np.array(found, dtype=np.int64), vectors
