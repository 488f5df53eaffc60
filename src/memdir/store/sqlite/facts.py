"""``SqliteFactStore``: the facts tables of ``index/facts.db``, for one scope.

The daily notes are the truth and these tables are derived from them, so
``memdir index rebuild`` (which deletes the file) loses only access statistics.
This module owns the store class: its connection (``connect.py``: WAL, busy
timeout, lock retries), transactions, queries and its cached ``FactMatrix``.
The schema is ``FACT_MIGRATIONS`` (``migrations.py``), the values are in
``fact_records``, their row codecs in ``fact_rows`` (shared with PostgreSQL);
every row carries a ``scope`` (``global`` or ``agent:<id>``) and a store reads
and writes one.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from memdir.errors import IndexMismatchError, MemdirError, StoreError
from memdir.store.contracts import EmbedderIdentity, KeywordQuery
from memdir.store.fact_records import (
    Fact,
    FactEvent,
    FactFilter,
    FactStamp,
    RetiredLine,
    Vector,
)
from memdir.store.fact_rows import (
    RETIRED_COLUMNS,
    RETIRED_WHERE,
    event_from_row,
    event_values,
    fact_from_row,
    fact_row,
    identity_rows,
    retired_from_row,
    where_admitted,
)
from memdir.store.identity import check_fact_identity
from memdir.store.sqlite.connect import (
    BUSY_TIMEOUT_MS,
    Connection,
    connect,
    database_error,
    in_transaction,
    is_locked,
    retry_locked,
    run,
)
from memdir.store.sqlite.migrations import FACT_MIGRATIONS, advance
from memdir.store.times import to_us

T = TypeVar("T")
logger = logging.getLogger(__name__)

FACT_COLUMNS = (
    "id, text, category, importance, recorded_us, valid_from_us, valid_to_us, supersedes, "
    "source_path, source_line, access_count, last_access_us, forgotten_us, forgotten_reason"
)
"""The ``facts`` columns a ``Fact`` is read from, in ``fact_from_row`` order."""

UPSERT_FACT = (
    f"INSERT INTO facts ({FACT_COLUMNS.replace('id,', 'id, scope,', 1)}) "
    f"VALUES ({', '.join('?' * 15)}) ON CONFLICT (scope, id) DO UPDATE SET text = excluded.text, "
    "category = excluded.category, importance = excluded.importance, "
    "recorded_us = excluded.recorded_us, valid_from_us = excluded.valid_from_us, "
    "valid_to_us = excluded.valid_to_us, supersedes = excluded.supersedes, "
    "source_path = excluded.source_path, source_line = excluded.source_line, "
    "forgotten_us = excluded.forgotten_us, "
    "forgotten_reason = excluded.forgotten_reason"
)
"""Insert a fact row (``fact_row`` order) or update it, keeping its access statistics."""


VECTOR_LOG_KEEP = 10_000  # newest vector changes kept; a matrix further behind reloads


def _marks(count: int) -> str:
    return ", ".join("?" * count)


class SqliteFactStore:
    """The facts tables of one SQLite file, for one ``scope``.

    ``__init__`` stores arguments; ``open()`` / ``connect()`` / ``with`` open the
    database and apply pending fact migrations. One connection per store, guarded
    by a lock, so threads may share a store; processes coordinate through WAL.
    """

    def __init__(self, path: Path | str, *, scope: str = "global") -> None:
        self.path = Path(path)
        self.scope = scope
        self._lock = threading.RLock()
        self._db: Connection | None = None
        self._matrix: FactMatrix | None = None
        self._in_transaction = False
        self._identity: EmbedderIdentity | None = None  # once read, until a clear
        self._accesses: dict[str, tuple[int, int]] = {}  # fact id -> (count, last us)

    @classmethod
    def open(cls, path: Path | str, *, scope: str = "global") -> SqliteFactStore:
        store = cls(path, scope=scope)
        store.connect()
        return store

    def connect(self) -> None:
        if self._db is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = connect(self.path)
        try:
            self._write(self._migrate)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                try:
                    if self._accesses:
                        self._flush_accesses(wait=True)
                except MemdirError as exc:  # the counts are statistics: closing goes on
                    logger.warning("%d fact access counts were not written: %s",
                                   len(self._accesses), exc)  # fmt: skip
                finally:
                    self._db.conn.close()
                    self._db = None
            self._identity = None

    def __enter__(self) -> SqliteFactStore:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _migrate(self, conn: sqlite3.Connection) -> None:
        advance(conn, FACT_MIGRATIONS, "fact_migrations", str(self.path))

    # -- transactions --------------------------------------------------------------------

    def _conn(self) -> Connection:
        if self._db is None:
            raise StoreError(f"the facts store {str(self.path)!r} is not open; call open() first")
        return self._db

    def _run(self, fn: Callable[[sqlite3.Connection], T], write: bool) -> T:
        with self._lock:
            db = self._conn()
            if self._in_transaction:  # inside transaction(): join it, never retry half of it
                return self._translated(db, lambda: fn(db.conn))
            begin = "BEGIN IMMEDIATE" if write else None
            result = run(db, self.path, fn, begin, "facts database")
            return result

    def _translated(self, db: Connection, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except db.errors as exc:
            raise database_error(self.path, exc, "facts database") from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run every call of the block in one write transaction (``BEGIN IMMEDIATE``).

        Other writers of the database (threads and processes) wait until the
        block ends; an exception rolls everything back. Nested blocks join the
        outer one.
        """
        with self._lock:
            db = self._conn()
            if self._in_transaction:
                yield
                return
            self._translated(
                db, lambda: retry_locked(lambda: db.conn.execute("BEGIN IMMEDIATE"), db.errors)
            )
            self._in_transaction = True
            try:
                yield
            except BaseException:
                self._in_transaction = False
                self._translated(db, lambda: db.conn.execute("ROLLBACK"))
                raise
            self._in_transaction = False
            self._translated(db, lambda: db.conn.execute("COMMIT"))

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return self._run(fn, write=False)

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return self._run(fn, write=True)

    # -- embedder identity ---------------------------------------------------------------

    @property
    def identity(self) -> EmbedderIdentity | None:
        """The embedder of the fact vectors (None before the first bind). Read once: it
        changes only when the facts are cleared, and a vector of other dimensions is
        refused when written (``apply``), so a save never waits for another save's
        transaction just to read it."""
        if self._identity is None:
            meta = self._read(lambda c: c.execute("SELECT key, value FROM fact_meta").fetchall())
            self._identity = EmbedderIdentity.from_meta(dict(meta), prefix="")
        return self._identity

    def bind_identity(self, identity: EmbedderIdentity) -> None:
        """Record the embedder of the fact vectors, or check it matches the recorded one."""
        recorded = self.identity
        if recorded is None:
            rows = identity_rows(identity)
            self._write(
                lambda c: c.executemany("INSERT OR REPLACE INTO fact_meta VALUES (?, ?)", rows)
            )
        else:
            check_fact_identity(str(self.path), recorded, identity)

    # -- files and events ----------------------------------------------------------------

    def file_stamps(self) -> dict[str, FactStamp]:
        rows = self._read(
            lambda c: c.execute(
                "SELECT path, sha256, size, mtime_ns FROM fact_files WHERE scope = ?", (self.scope,)
            ).fetchall()
        )
        return {r[0]: FactStamp(*r) for r in rows}

    def event_paths(self) -> set[str]:
        """Every file that holds recorded events (stamped by a sync or not)."""
        rows = self._read(
            lambda c: c.execute(
                "SELECT DISTINCT path FROM fact_events WHERE scope = ?", (self.scope,)
            ).fetchall()
        )
        return {r[0] for r in rows}

    def replace_file_events(
        self, changed: Sequence[tuple[FactStamp, Sequence[FactEvent]]], removed: Sequence[str]
    ) -> None:
        """Replace the events (and stamps) of changed files and drop removed files, atomically."""

        def write(conn: sqlite3.Connection) -> None:
            for path in [*removed, *(stamp.path for stamp, _ in changed)]:
                conn.execute(
                    "DELETE FROM fact_events WHERE scope = ? AND path = ?", (self.scope, path)
                )
                conn.execute(
                    "DELETE FROM fact_files WHERE scope = ? AND path = ?", (self.scope, path)
                )
            for stamp, events in changed:
                conn.execute(
                    "INSERT INTO fact_files VALUES (?, ?, ?, ?, ?)",
                    (self.scope, stamp.path, stamp.sha256, stamp.size, stamp.mtime_ns),
                )
                self._insert_events(conn, events)

        self._write(write)

    def _insert_events(self, conn: sqlite3.Connection, events: Iterable[FactEvent]) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO fact_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(self.scope, *event_values(e)) for e in events],
        )

    def all_events(self, path: str | None = None) -> list[FactEvent]:
        """Every recorded event of this scope, or of one file."""
        sql = (
            "SELECT path, line, kind, fact_id, at_us, text, category, importance, supersedes, "
            "reason FROM fact_events WHERE scope = ?"
        )
        args = [self.scope]
        if path is not None:
            sql, args = sql + " AND path = ?", [*args, path]
        rows = self._read(lambda c: c.execute(sql, args).fetchall())
        return [event_from_row(r) for r in rows]

    # -- facts ---------------------------------------------------------------------------

    def apply(
        self,
        events: Sequence[FactEvent] = (),
        upserts: Sequence[Fact] = (),
        deletes: Sequence[str] = (),
        vectors: dict[str, tuple[str, Vector]] | None = None,
        stamps: Sequence[FactStamp] = (),
    ) -> None:
        """In one transaction: record events, upsert facts, delete facts, store vectors.

        Upserts keep a fact's access statistics; ``vectors`` maps fact id to
        (sha256 of the embedded text, vector); ``stamps`` replace notes' stamps
        (their events are the recorded ones plus ``events``).
        """

        def write(conn: sqlite3.Connection) -> None:
            self._insert_events(conn, events)
            conn.executemany(
                "INSERT OR REPLACE INTO fact_files VALUES (?, ?, ?, ?, ?)",
                [(self.scope, s.path, s.sha256, s.size, s.mtime_ns) for s in stamps],
            )
            conn.executemany(UPSERT_FACT, [fact_row(self.scope, fact) for fact in upserts])
            conn.executemany(
                "DELETE FROM facts WHERE id = ? AND scope = ?", [(i, self.scope) for i in deletes]
            )
            if vectors:
                _check_dimensions(conn, self.path, vectors)
            for fid, (sha, vector) in (vectors or {}).items():
                conn.execute(
                    "INSERT OR REPLACE INTO fact_vectors (num, text_sha256, embedding) "
                    "SELECT num, ?, ? FROM facts WHERE scope = ? AND id = ?",
                    (sha, vector_blob(vector), self.scope, fid),
                )
            if vectors or deletes:
                conn.execute(
                    "DELETE FROM fact_vector_log WHERE seq <= "
                    "(SELECT max(seq) FROM fact_vector_log) - ?",
                    (VECTOR_LOG_KEEP,),
                )

        self._write(write)

    def get_facts(self, ids: Iterable[str]) -> dict[str, Fact]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        sql = f"SELECT {FACT_COLUMNS} FROM facts WHERE scope = ? AND id IN ({_marks(len(wanted))})"
        rows = self._read(lambda c: c.execute(sql, [self.scope, *wanted]).fetchall())
        return {row[0]: fact_from_row(row) for row in rows}

    def list_facts(self, filt: FactFilter) -> list[Fact]:
        """Facts admitted by ``filt``, oldest first."""
        where, args = where_admitted(self.scope, filt)
        sql = f"SELECT {FACT_COLUMNS} FROM facts f WHERE {where} ORDER BY f.recorded_us, f.id"
        return [fact_from_row(row) for row in self._read(lambda c: c.execute(sql, args).fetchall())]

    def retired_lines(
        self, scopes: Sequence[str], paths: Sequence[str] | None = None
    ) -> list[RetiredLine]:
        """The note lines of ``scopes`` (in ``paths`` when given) that hold no current fact
        (``RetiredLine``): one query for a search over several workspaces, whatever this
        store's own scope. With ``paths`` it reads only those files' events."""
        if not scopes or (paths is not None and not paths):
            return []
        where = f"e.scope IN ({_marks(len(scopes))})"
        args: list[str] = list(scopes)
        if paths is not None:
            where += f" AND e.path IN ({_marks(len(paths))})"
            args += paths
        sql = (
            f"SELECT {RETIRED_COLUMNS} FROM fact_events e LEFT JOIN facts f "
            f"ON f.id = e.fact_id AND f.scope = e.scope WHERE {where} AND {RETIRED_WHERE}"
        )
        rows = self._read(lambda c: c.execute(sql, args).fetchall())
        return [retired_from_row(row) for row in rows]

    def vector_shas(self) -> dict[str, str]:
        """Fact id -> sha256 of the text its stored vector was computed from."""
        rows = self._read(
            lambda c: c.execute(
                "SELECT f.id, v.text_sha256 FROM fact_vectors v JOIN facts f ON f.num = v.num "
                "WHERE f.scope = ?",
                (self.scope,),
            ).fetchall()
        )
        return dict(rows)

    def count_unembedded(self) -> int:
        """How many facts of this scope have no vector (cheap check before a backfill)."""
        sql = (
            "SELECT count(*) FROM facts f LEFT JOIN fact_vectors v ON v.num = f.num "
            "WHERE f.scope = ? AND v.num IS NULL"
        )
        return int(self._read(lambda c: c.execute(sql, (self.scope,)).fetchone()[0]))

    def record_access(self, ids: Sequence[str], when: datetime) -> None:
        """Count an access to each fact. The counts wait in memory while another writer
        holds the database (a recall never queues behind saves for them) and are
        written by the next call that finds it free, or by ``close``; a process killed
        meanwhile loses them, as a rebuild does."""
        with self._lock:
            moment = to_us(when)
            for fid in ids:
                count, last = self._accesses.get(fid, (0, moment))
                self._accesses[fid] = (count + 1, max(last, moment))
            self._flush_accesses(wait=self._in_transaction)

    def _flush_accesses(self, wait: bool) -> None:
        pending = [(n, last, self.scope, fid) for fid, (n, last) in self._accesses.items()]

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "UPDATE facts SET access_count = access_count + ?, "
                "last_access_us = max(coalesce(last_access_us, 0), ?) WHERE scope = ? AND id = ?",
                pending,
            )

        db = self._conn()
        if wait or self._in_transaction:
            self._run(write, write=True)
        elif not self._translated(db, lambda: _try_write(db, write)):
            return  # another writer holds the database: the counts wait for the next call
        self._accesses.clear()

    def clear(self) -> None:
        """Drop every fact, event and file stamp of this scope (before a rebuild)."""

        def clear(conn: sqlite3.Connection) -> None:
            for table in ("facts", "fact_events", "fact_files"):
                conn.execute(f"DELETE FROM {table} WHERE scope = ?", (self.scope,))
            if conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0:
                conn.execute("DELETE FROM fact_meta")

        self._write(clear)
        self._identity = None
        self._accesses.clear()

    # -- search --------------------------------------------------------------------------

    def keyword_search(
        self, query: KeywordQuery, filt: FactFilter, limit: int
    ) -> list[tuple[str, float]]:
        """FTS5 over admitted facts: (fact id, ``-bm25()`` >= 0) for the OR of the query's
        terms (each quoted, so any text is a valid term), best first."""
        if not query:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in query.terms)
        where, args = where_admitted(self.scope, filt)
        sql = (
            "SELECT f.id, -bm25(facts_fts) FROM facts_fts JOIN facts f ON f.num = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND {where} ORDER BY bm25(facts_fts) LIMIT ?"
        )
        rows = self._read(lambda c: c.execute(sql, [match, *args, limit]).fetchall())
        return [(fid, max(0.0, float(score))) for fid, score in rows]

    def vector_search(self, query: Vector, filt: FactFilter, limit: int) -> list[tuple[str, float]]:
        """Cosine over the vectors of admitted facts: (fact id, cosine), best first."""
        matrix = self._load_matrix()
        if not matrix.ids:
            return []
        where, args = where_admitted(self.scope, filt)
        allowed = {
            r[0]
            for r in self._read(
                lambda c: c.execute(f"SELECT f.id FROM facts f WHERE {where}", args).fetchall()
            )
        }
        return matrix.search(query, allowed, limit)

    def _load_matrix(self) -> FactMatrix:
        """The scope's fact vectors as of now, following ``fact_vector_log``: a change of
        other facts (a save's row, an access count) keeps the vectors; a vector written or
        deleted by any connection is re-read alone."""
        self._matrix = self._read(lambda c: FactMatrix.read(c, self.scope, self._matrix))
        return self._matrix


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
    def read(cls, conn: sqlite3.Connection, scope: str, held: FactMatrix | None) -> FactMatrix:
        """The vectors of ``scope`` on ``conn`` (one snapshot): ``held`` itself when no
        vector changed since it was read, else ``held`` with the changed rows re-read,
        or all rows when the log no longer reaches back to it."""
        snapshot = not conn.in_transaction
        if snapshot:
            conn.execute("BEGIN")
        try:
            return cls._read(conn, scope, held)
        finally:
            if snapshot:
                conn.execute("COMMIT")

    @classmethod
    def _read(cls, conn: sqlite3.Connection, scope: str, held: FactMatrix | None) -> FactMatrix:
        top = int(conn.execute("SELECT max(seq) FROM fact_vector_log").fetchone()[0] or 0)
        if held is not None and held.seq == top:
            return held
        low = conn.execute("SELECT min(seq) FROM fact_vector_log").fetchone()[0]
        sql = (
            "SELECT v.num, f.id, v.embedding FROM fact_vectors v JOIN facts f ON f.num = v.num "
            "WHERE f.scope = ?"
        )
        if held is None or low is None or int(low) > held.seq + 1:  # the log was pruned
            return cls.of_rows(top, conn.execute(f"{sql} ORDER BY v.num", (scope,)).fetchall())
        changed = [r[0] for r in conn.execute(
            "SELECT DISTINCT num FROM fact_vector_log WHERE seq > ?", (held.seq,))]  # fmt: skip
        rows: list[tuple[int, str, bytes]] = []
        for start in range(0, len(changed), 500):
            batch = changed[start : start + 500]
            args = (scope, *batch)
            rows += conn.execute(f"{sql} AND v.num IN ({_marks(len(batch))})", args).fetchall()
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


def _check_dimensions(
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


def _try_write(db: Connection, fn: Callable[[sqlite3.Connection], None]) -> bool:
    """``fn`` in a write transaction if the database is free now; False if another writer
    holds it (no waiting: the busy timeout is off until the write lock is ours)."""

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        fn(conn)

    db.conn.execute("PRAGMA busy_timeout = 0")
    try:
        in_transaction(db.conn, write, "BEGIN IMMEDIATE")
    except db.errors as exc:
        if is_locked(exc):
            return False
        raise
    finally:
        db.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return True
