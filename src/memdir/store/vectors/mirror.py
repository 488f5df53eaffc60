"""This process's in-memory copy of a backend's vectors, kept fresh through ``vector_log``.

Owns ``VectorMirror`` and the ``StoredVectors`` protocol it reads a backend
through. Before a search the mirror reads the log's high-water mark (one small
query); new entries are re-read by id and applied in place, so writes of this
and other processes are seen without a full reload. A new ``meta.vector_epoch``
(after ``clear``), a log pruned past what the mirror has seen, or more changes
than ``RELOAD_SHARE`` of the mirror force a full reload. The same refresh follows
the kinds' vector graphs (``graph.py``): a new ``meta`` tag is attached with the
ids logged since the graph's position, a tag of another epoch is dropped.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

from memdir.store.base import ScoredId, UnitKind
from memdir.store.vectors.codec import StoredRow, Vector
from memdir.store.vectors.graph import GraphTag, Keys, database_file, open_graph, read_tags
from memdir.store.vectors.log import VECTOR_LOG
from memdir.store.vectors.matrix import UnitMatrix

RELOAD_SHARE = 0.25  # more changed ids than this share of the mirror: reload in full


class StoredVectors(Protocol):
    """How a mirror reads the rows of its backend's table."""

    def read_rows(self, conn: sqlite3.Connection, ids: Sequence[int] | None) -> Iterable[StoredRow]:
        """Rows for ``ids`` (absent ids are missing), or every row when ``ids`` is None."""
        ...


class VectorMirror:
    """This process's in-memory copy of a backend's vectors, kept fresh by ``vector_log``."""

    def __init__(self, stored: StoredVectors) -> None:
        self._stored = stored
        self._kinds: dict[str, UnitMatrix] = {}
        self._state: tuple[str, int] | None = None  # (epoch, last log seq applied)
        self._unreadable: set[GraphTag] = set()  # graph files that failed to open (warned once)
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
            state, changed = VECTOR_LOG.catch_up(conn, self._state)
            if changed is None:
                self._load_all(conn)
            elif changed:
                self._apply(conn, changed)
            self._state = state
            self._follow_graphs(conn, state[0])
        finally:
            if own:
                conn.execute("COMMIT")

    def snapshot(
        self, conn: sqlite3.Connection, kind: str
    ) -> tuple[tuple[str, int], Keys, Vector] | None:
        """The log position and a copy of ``kind``'s ids and vectors as of it (None: no rows)."""
        self.refresh(conn)
        matrix = self._kinds.get(kind)
        if matrix is None or matrix.count == 0 or self._state is None:
            return None
        count = matrix.count
        return self._state, matrix.ids[:count].copy(), matrix.vectors[:count].copy()

    def _follow_graphs(self, conn: sqlite3.Connection, epoch: str) -> None:
        """Attach each kind's current graph, drop graphs no tag names (one small query)."""
        tags = read_tags(conn)
        for kind, matrix in self._kinds.items():
            tag = tags.get(kind)
            if tag is None or tag.epoch != epoch:
                matrix.detach_graph()
            elif tag != matrix.graph_tag and tag not in self._unreadable:
                self._attach(conn, matrix, tag)

    def _attach(self, conn: sqlite3.Connection, matrix: UnitMatrix, tag: GraphTag) -> None:
        database = database_file(conn)
        if database is None:
            return
        if VECTOR_LOG.behind((tag.epoch, tag.seq), VECTOR_LOG.state(conn)):
            matrix.detach_graph()  # the log no longer says what changed since: rebuilt on sync
            return
        graph = open_graph(database, tag)
        if graph is None:
            self._unreadable.add(tag)
            matrix.detach_graph()
            return
        matrix.attach_graph(graph, tag, VECTOR_LOG.changed_since(conn, tag.seq))

    def _apply(self, conn: sqlite3.Connection, ids: list[int]) -> None:
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
