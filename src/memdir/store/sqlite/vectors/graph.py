"""Vector graphs: a nearest-neighbour graph per large unit kind, kept on disk beside the index.

A sign-bit scan costs ~7 ms per million rows and a search runs two, so above
``GRAPH_MIN_ROWS`` rows a kind is searched through an HNSW graph (``usearch``,
int8, cosine) instead: ~1-3 ms whatever the size. Building one takes minutes
at a million rows, so it is built once, by the writer at the end of a sync
(``SqliteStore.optimize``), from the vectors table in one read transaction, and
saved as a file next to the index; a ``meta`` row ``vector_graph:<kind>`` names the
file, the change-log position its rows were read at (``changelog.py``) and its rows
per source. Every process maps the file read-only, fetches the vectors of the
graph's answers by id, and holds in memory only the rows of files changed since that
position (``vectors/search.py``). When ``GRAPH_REFRESH`` units or more belong to
files changed since, the next sync builds a new graph. A graph is derived data: a
missing, unreadable or outdated file only sends searches back to a full copy of the
kind (with a logged warning), never loses a vector.

Owns the file format and naming, building, opening and the ``meta`` tag.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memdir.machine import usable_cpus
from memdir.store.sqlite.changelog import LogState, Position, changed_since, log_state
from memdir.store.sqlite.connect import READER_CACHE_KIB, connect, database_error
from memdir.store.sqlite.vectors.codec import Vector

log = logging.getLogger(__name__)

GRAPH_MIN_ROWS = 200_000  # kinds with fewer rows are scanned (a scan is then <= 2 ms)
GRAPH_REFRESH = 20_000  # units of files changed since the graph that make a sync rebuild it
GRAPH_CANDIDATES = 200  # graph answers per search, at least (then rescored exactly)
GRAPH_PER_RESULT = 5  # graph answers per wanted result (at least GRAPH_CANDIDATES)
GRAPH_MIN_SHARE = 0.5  # a source filter admitting fewer rows than this share is scanned
GRAPH_EXPANSION = 128  # HNSW search breadth (``ef``), at least the candidates asked for
GRAPH_CONNECTIVITY = 16  # HNSW links per node (``M``)
GRAPH_BUILD_EXPANSION = 64  # HNSW breadth while adding (``ef_construction``)
BUILD_BATCH = 65_536  # rows read and added to a graph at a time
TAG_PREFIX = "vector_graph:"
SUFFIX = ".usearch"

Keys = npt.NDArray[np.int64]
Write = Callable[[Callable[[sqlite3.Connection], bool]], bool]


@dataclass(frozen=True)
class GraphTag:
    """What ``meta`` says of a kind's graph: its file (beside the index), the change-log
    position its rows were read at and how many rows of each source it holds."""

    file: str
    epoch: str
    seq: int
    rows: int
    sources: dict[str, int] = field(default_factory=dict, compare=False, hash=False)

    @property
    def position(self) -> Position:
        return Position(self.epoch, self.seq)

    def share(self, sources: Iterable[str]) -> float:
        """The share of the graph's rows in ``sources`` (1.0 when it does not know)."""
        if not self.sources or not self.rows:
            return 1.0
        return sum(self.sources.get(s, 0) for s in set(sources)) / self.rows

    def dumps(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def loads(cls, text: str) -> GraphTag | None:
        """The tag in ``text``, or None when it is not one (then the graph is ignored)."""
        try:
            data = json.loads(text)
            sources = {str(k): int(v) for k, v in dict(data.get("sources", {})).items()}
            return cls(
                str(data["file"]), str(data["epoch"]), int(data["seq"]), int(data["rows"]), sources
            )
        except (ValueError, TypeError, KeyError, AttributeError):
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


def graphs_due(conn: sqlite3.Connection, database: Path, min_rows: int, now: LogState) -> list[str]:
    """The unit kinds of at least ``min_rows`` vectors whose graph is missing or outdated.

    Outdated: built in another epoch (before a ``clear``), so long ago the log no longer
    says what changed since, ``GRAPH_REFRESH`` or more units in files changed since, or
    its file is gone. Costs a count of the units (~10 ms at a million); past ``min_rows``
    units also a count by kind (~0.5 s at a million), and more only when one is due.
    """
    if min_rows <= 0 or conn.execute("SELECT count(*) FROM units").fetchone()[0] < min_rows:
        return []
    counts = conn.execute(
        "SELECT kind, count(*) FROM units WHERE vector_id IS NOT NULL GROUP BY kind"
    ).fetchall()
    tags = read_tags(conn)
    due = []
    for kind, count in counts:
        tag = tags.get(kind)
        if count < min_rows:
            continue
        if (
            tag is None
            or not now.reaches(tag.position)
            or not (database.parent / tag.file).is_file()
            or changed_units(conn, kind, tag.seq) >= GRAPH_REFRESH
        ):
            due.append(str(kind))
    return due


def changed_units(conn: sqlite3.Connection, kind: str, seq: int) -> int:
    """How many units of ``kind`` belong to files changed since ``seq``."""
    files = changed_since(conn, seq)
    total = 0
    for start in range(0, len(files), 500):
        batch = files[start : start + 500]
        total += conn.execute(
            "SELECT count(*) FROM units WHERE kind = ? "
            f"AND file_id IN ({', '.join('?' * len(batch))})",
            (kind, *batch),
        ).fetchone()[0]
    return int(total)


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


def build_graphs(
    database: Path, min_rows: int, progress: Callable[[str], None] | None, write: Write
) -> list[str]:
    """Build the graph of every kind ``graphs_due`` names; returns the kinds built.

    Each kind's rows are read in one read transaction on a connection of its own, batch
    by batch into the graph (the process holds the graph and one batch, never a copy of
    the kind); ``write`` runs the transaction that publishes the tag.
    """
    db = connect(database, cache_kib=READER_CACHE_KIB)
    conn = db.conn
    built: list[str] = []
    try:
        conn.execute("BEGIN")
        try:
            due = graphs_due(conn, database, min_rows, log_state(conn))
        finally:
            conn.execute("COMMIT")
        for kind in due:
            if _build_kind(conn, database, kind, min_rows, progress, write):
                built.append(kind)
    except db.errors as exc:
        raise database_error(database, exc) from exc
    finally:
        conn.close()
    return built


def _build_kind(
    conn: sqlite3.Connection,
    database: Path,
    kind: str,
    min_rows: int,
    progress: Callable[[str], None] | None,
    write: Write,
) -> bool:
    conn.execute("BEGIN")  # the rows and the log position they are read at: one snapshot
    try:
        now = log_state(conn)
        sources = dict(
            conn.execute(
                "SELECT source, count(*) FROM units WHERE kind = ? AND vector_id IS NOT NULL "
                "GROUP BY source",
                (kind,),
            ).fetchall()
        )
        rows = sum(sources.values())
        if rows < min_rows:
            return False
        message = f"building the vector graph of {rows:,} {kind}s"
        log.info("%s (%s)", message, database)
        if progress is not None:
            progress(message)
        name, count = build_graph(database, kind, _vector_batches(conn, kind))
    finally:
        conn.execute("COMMIT")
    tag = GraphTag(file=name, epoch=now.epoch, seq=now.high, rows=count, sources=sources)

    def publish(c: sqlite3.Connection) -> bool:
        if log_state(c).epoch != now.epoch:
            return False  # the index was cleared meanwhile
        write_tag(c, kind, tag)
        return True

    published = write(publish)
    remove_other_files(database, kind, name if published else None)
    return published


def _vector_batches(conn: sqlite3.Connection, kind: str) -> Iterator[tuple[Keys, Vector]]:
    cursor = conn.execute(
        "SELECT u.id, e.vector FROM units u JOIN embeddings e ON e.id = u.vector_id "
        "WHERE u.kind = ? ORDER BY u.id",
        (kind,),
    )
    while rows := cursor.fetchmany(BUILD_BATCH):
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        data = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        yield ids, data.reshape(len(rows), -1)


def build_graph(
    database: Path, kind: str, batches: Iterable[tuple[Keys, Vector]]
) -> tuple[str, int]:
    """Write a graph of the (unit ids, vectors) ``batches`` beside ``database``; returns
    its file name and row count.

    The file is written under a temporary name and renamed into place, so a reader
    never maps a half-written graph; the caller then points the tag at it.
    """
    from usearch.index import Index  # imported lazily: only writers of large indexes need it

    name = f"{database.name}.graph-{kind}-{uuid.uuid4().hex[:12]}{SUFFIX}"
    index = None
    for ids, vectors in batches:
        if index is None:
            index = Index(
                ndim=vectors.shape[1],
                metric="cos",
                dtype="i8",
                connectivity=GRAPH_CONNECTIVITY,
                expansion_add=GRAPH_BUILD_EXPANSION,
            )
        index.add(ids, vectors, threads=usable_cpus())
    if index is None:
        raise ValueError(f"no {kind} vectors to build a graph of")
    partial = database.parent / (name + ".part")
    try:
        index.save(str(partial))
        os.replace(partial, database.parent / name)
    finally:
        partial.unlink(missing_ok=True)
    return name, len(index)


def remove_other_files(database: Path, kind: str, keep: str | None) -> None:
    """Delete the graph files of ``kind`` except ``keep`` (best effort: a file another
    process still maps may refuse to go on some systems; the next build tries again)."""
    for path in graph_files(database, kind):
        if path.name != keep:
            try:
                path.unlink()
            except OSError as exc:
                log.debug("old vector graph %s not removed yet: %s", path, exc)
