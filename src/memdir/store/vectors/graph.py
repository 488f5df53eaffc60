"""Vector graphs: a nearest-neighbour graph per large unit kind, kept on disk beside the index.

A sign-bit scan costs ~7 ms per million rows and a search runs two, so above
``GRAPH_MIN_ROWS`` rows a kind is searched through an HNSW graph (``usearch``,
int8, cosine) instead: ~1-3 ms whatever the size. Building one takes minutes
at a million rows, so it is built once, by the writer at the end of a sync
(``SqliteStore.optimize_vectors``), and saved as a file next to the index; a
``meta`` row ``vector_graph:<kind>`` names the file and the ``vector_log``
position (epoch, seq) its rows were read at. Every process maps the file
read-only and treats the rows logged after that position as *changed*: the
graph's answers for them are dropped and their current vectors are ranked by
the mirror's own sign-bit pass over those rows alone. When more than
``GRAPH_REFRESH`` entries have been logged since, the next sync builds a new
graph. A graph is derived data: a missing, unreadable or outdated file only
sends searches back to the scan (with a logged warning), never loses a vector.

Owns the file format and naming, building, opening and the ``meta`` tag. No
search logic: ``UnitMatrix`` decides when to ask a graph (``matrix.py``).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memdir.machine import usable_cpus
from memdir.store.vectors.codec import Vector
from memdir.store.vectors.log import VECTOR_LOG

log = logging.getLogger(__name__)

GRAPH_MIN_ROWS = 200_000  # kinds with fewer rows are scanned (a scan is then <= 2 ms)
GRAPH_REFRESH = 20_000  # log entries since the graph's position that make a sync rebuild it
GRAPH_CANDIDATES = 200  # graph answers per search, at least (then rescored exactly)
GRAPH_EXPANSION = 128  # HNSW search breadth (``ef``), at least the candidates asked for
GRAPH_CONNECTIVITY = 16  # HNSW links per node (``M``)
GRAPH_BUILD_EXPANSION = 64  # HNSW breadth while adding (``ef_construction``)
TAG_PREFIX = "vector_graph:"
SUFFIX = ".usearch"

Keys = npt.NDArray[np.int64]


@dataclass(frozen=True)
class GraphTag:
    """What ``meta`` says of a kind's graph: its file (beside the index) and log position."""

    file: str
    epoch: str
    seq: int
    rows: int

    def dumps(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def loads(cls, text: str) -> GraphTag | None:
        """The tag in ``text``, or None when it is not one (then the graph is ignored)."""
        try:
            data = json.loads(text)
            return cls(str(data["file"]), str(data["epoch"]), int(data["seq"]), int(data["rows"]))
        except (ValueError, TypeError, KeyError):
            return None


def read_tags(conn: sqlite3.Connection) -> dict[str, GraphTag]:
    """Unit kind -> the graph tag ``meta`` holds for it (unreadable tags are left out)."""
    rows = conn.execute("SELECT key, value FROM meta WHERE key LIKE ?", (TAG_PREFIX + "%",))
    tags = {key[len(TAG_PREFIX) :]: GraphTag.loads(value) for key, value in rows}
    return {kind: tag for kind, tag in tags.items() if tag is not None}


def write_tag(conn: sqlite3.Connection, kind: str, tag: GraphTag) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (TAG_PREFIX + kind, tag.dumps()))


def drop_tags(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM meta WHERE key LIKE ?", (TAG_PREFIX + "%",))


def graphs_due(conn: sqlite3.Connection, database: Path, min_rows: int) -> list[str]:
    """The unit kinds of at least ``min_rows`` rows whose graph is missing or outdated.

    Outdated: built in another epoch (before a ``clear``), ``GRAPH_REFRESH`` or more log
    entries ago, so long ago the log no longer says what changed since, or its file
    is gone. Costs a count of the units (~10 ms at a million); past ``min_rows`` units also
    a count by kind (~0.5 s at a million), and more only when one is due.
    """
    if min_rows <= 0 or conn.execute("SELECT count(*) FROM units").fetchone()[0] < min_rows:
        return []
    counts = conn.execute("SELECT kind, count(*) FROM units GROUP BY kind").fetchall()
    tags, now = read_tags(conn), VECTOR_LOG.state(conn)
    due = []
    for kind, count in counts:
        tag = tags.get(kind)
        if count < min_rows:
            continue
        if (
            tag is None
            or VECTOR_LOG.behind((tag.epoch, tag.seq), now)
            or now.high - tag.seq >= GRAPH_REFRESH
            or not (database.parent / tag.file).is_file()
        ):
            due.append(str(kind))
    return due


def database_file(conn: sqlite3.Connection) -> Path | None:
    """The main database file of ``conn``; None for an in-memory database (no graphs)."""
    for _seq, name, file in conn.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return Path(file) if file else None
    return None


def graph_files(database: Path, kind: str) -> list[Path]:
    """Every graph file of ``kind`` (``"*"``: of any kind) beside ``database``."""
    return sorted(database.parent.glob(f"{database.name}.graph-{kind}-*{SUFFIX}"))


class Graph:
    """A read-only view of one saved graph (memory-mapped: opening it reads nothing)."""

    def __init__(self, path: Path) -> None:
        from usearch.index import Index  # imported lazily: only processes with a graph load it

        index = Index.restore(str(path), view=True)
        if index is None:
            raise ValueError(f"{path} is not a vector graph")
        self.path = path
        self._index = index
        self.rows = len(index)

    def search(self, query: Vector, count: int) -> Keys:
        """Unit ids of about the ``count`` nearest rows (approximate; scores are not kept)."""
        breadth = max(GRAPH_EXPANSION, count)
        if self._index.expansion_search != breadth:
            # usearch declares the setter apart from the property, which mypy misreads
            self._index.expansion_search = breadth  # type: ignore[misc]
        found = self._index.search(query, count)
        keys: Keys = np.asarray(found.keys, dtype=np.int64)
        return keys


def open_graph(database: Path, tag: GraphTag) -> Graph | None:
    """The graph ``tag`` names, or None (with a warning) when it cannot be read."""
    path = database.parent / tag.file
    try:
        graph = Graph(path)
    except (OSError, ValueError, RuntimeError) as exc:
        log.warning(
            "vector graph %s cannot be read (%s); searching by scan until "
            "`memdir index sync` builds it again",
            path,
            exc,
        )
        return None
    if graph.rows != tag.rows:
        log.warning(
            "vector graph %s holds %d rows, its tag says %d; searching by scan until "
            "`memdir index sync` builds it again",
            path,
            graph.rows,
            tag.rows,
        )
        return None
    return graph


def build_graph(database: Path, kind: str, ids: Keys, vectors: Vector) -> str:
    """Write a graph of ``vectors`` (unit ``ids``) beside ``database``; returns its file name.

    The file is written under a temporary name and renamed into place, so a reader
    never maps a half-written graph; the caller then points the tag at it.
    """
    from usearch.index import Index  # imported lazily: only writers of large indexes need it

    name = f"{database.name}.graph-{kind}-{uuid.uuid4().hex[:12]}{SUFFIX}"
    index = Index(
        ndim=vectors.shape[1],
        metric="cos",
        dtype="i8",
        connectivity=GRAPH_CONNECTIVITY,
        expansion_add=GRAPH_BUILD_EXPANSION,
    )
    index.add(ids, vectors, threads=usable_cpus())
    partial = database.parent / (name + ".part")
    try:
        index.save(str(partial))
        os.replace(partial, database.parent / name)
    finally:
        partial.unlink(missing_ok=True)
    return name


def remove_other_files(database: Path, kind: str, keep: str | None) -> None:
    """Delete the graph files of ``kind`` except ``keep`` (best effort: a file another
    process still maps may refuse to go on some systems; the next build tries again)."""
    for path in graph_files(database, kind):
        if path.name != keep:
            try:
                path.unlink()
            except OSError as exc:
                log.debug("old vector graph %s not removed yet: %s", path, exc)
