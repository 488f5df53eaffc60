"""``SqliteFactStore``: the facts tables of ``index/facts.db``, for one scope.

The daily notes are the truth and these tables are derived from them, so
``memdir index rebuild`` (which deletes the file) loses only access statistics.
This module owns the connection (``connect.py``: WAL, busy timeout, lock retries) and
its transactions; the statements are in ``sql``, the vector engine in ``vectors``, the
access counts written behind in ``accesses``. Every row carries a ``scope`` (``global``
or ``agent:<id>``) and a store reads and writes one.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from memdir.errors import DiskFullError, MemdirError, ReadOnlyHomeError, StoreError
from memdir.store.contracts import EmbedderIdentity, KeywordQuery
from memdir.store.fact_records import Fact, FactEvent, FactFilter, FactStamp, RetiredLine, Vector
from memdir.store.fact_rows import identity_rows
from memdir.store.identity import check_fact_identity
from memdir.store.sqlite.connect import (
    Connection,
    connect,
    database_error,
    ensure_folder,
    reopened,
    retry_locked,
    run,
    warn_once,
)
from memdir.store.sqlite.facts import sql
from memdir.store.sqlite.facts.accesses import AccessCounts, try_write
from memdir.store.sqlite.facts.vectors import FactMatrix, check_dimensions, vector_blob
from memdir.store.sqlite.migrations import FACT_MIGRATIONS, advance, pending

T = TypeVar("T")
logger = logging.getLogger(__name__)


class SqliteFactStore:
    """The facts tables of one SQLite file, for one ``scope``.

    ``__init__`` stores arguments; ``open()`` / ``connect()`` / ``with`` open the
    database and apply pending fact migrations. One connection per store, guarded
    by a lock, so threads may share a store; processes coordinate through WAL.
    """

    def __init__(self, path: Path | str, *, source: str = "global") -> None:
        self.path = Path(path)
        self.source = source
        self._lock = threading.RLock()
        self._db: Connection | None = None
        self._matrix: FactMatrix | None = None
        self._in_transaction = False
        self._identity: EmbedderIdentity | None = None  # once read, until a clear
        self._accesses = AccessCounts(source)

    @classmethod
    def open(cls, path: Path | str, *, source: str = "global") -> SqliteFactStore:
        store = cls(path, source=source)
        store.connect()
        return store

    def connect(self) -> None:
        if self._db is not None:
            return
        ensure_folder(self.path)
        self._db = connect(self.path)
        where = str(self.path)
        try:
            if self._read(lambda c: bool(pending(c, FACT_MIGRATIONS, "fact_migrations", where))):
                self._write(lambda c: advance(c, FACT_MIGRATIONS, "fact_migrations", where))
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

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions --------------------------------------------------------------------

    def _conn(self) -> Connection:
        if self._db is None:
            raise StoreError(f"the facts store {str(self.path)!r} is not open; call open() first")
        if not self._in_transaction:  # read-only until it can be written again
            self._db = reopened(self._db, self.path)
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
            meta = self._read(sql.read_meta)
            self._identity = EmbedderIdentity.from_meta(meta, prefix="")
        return self._identity

    def bind_identity(self, identity: EmbedderIdentity) -> None:
        """Record the embedder of the fact vectors, or check it matches the recorded one."""
        recorded = self.identity
        if recorded is None:
            rows = identity_rows(identity)
            self._write(lambda c: sql.write_meta(c, rows))
        else:
            check_fact_identity(str(self.path), recorded, identity)

    # -- files and events ----------------------------------------------------------------

    def file_stamps(self) -> dict[str, FactStamp]:
        return self._read(lambda c: sql.file_stamps(c, self.source))

    def event_paths(self) -> set[str]:
        """Every file that holds recorded events (stamped by a sync or not)."""
        return self._read(lambda c: sql.event_paths(c, self.source))

    def replace_file_events(
        self, changed: Sequence[tuple[FactStamp, Sequence[FactEvent]]], removed: Sequence[str]
    ) -> None:
        """Replace the events (and stamps) of changed files and drop removed files, atomically."""
        self._write(lambda c: sql.replace_file_events(c, self.source, changed, removed))

    def all_events(self, path: str | None = None) -> list[FactEvent]:
        """Every recorded event of this scope, or of one file."""
        return self._read(lambda c: sql.all_events(c, self.source, path))

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
            sql.insert_events(conn, self.source, events)
            sql.write_stamps(conn, self.source, stamps)
            sql.upsert_facts(conn, self.source, upserts)
            sql.delete_facts(conn, self.source, deletes)
            if vectors:
                check_dimensions(conn, self.path, vectors)
            for fid, (sha, vector) in (vectors or {}).items():
                sql.write_vector(conn, self.source, fid, sha, vector_blob(vector))
            if vectors or deletes:
                sql.prune_vector_log(conn)

        self._write(write)

    def get_facts(self, ids: Iterable[str]) -> dict[str, Fact]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        return self._read(lambda c: sql.get_facts(c, self.source, wanted))

    def list_facts(self, filt: FactFilter) -> list[Fact]:
        """Facts admitted by ``filt``, oldest first."""
        return self._read(lambda c: sql.list_facts(c, self.source, filt))

    def retired_lines(
        self, sources: Sequence[str], paths: Sequence[str] | None = None
    ) -> list[RetiredLine]:
        """The note lines of ``scopes`` (in ``paths`` when given) that hold no current fact
        (``RetiredLine``): one query for a search over several workspaces, whatever this
        store's own scope. With ``paths`` it reads only those files' events."""
        if not sources or (paths is not None and not paths):
            return []
        return self._read(lambda c: sql.retired_lines(c, sources, paths))

    def vector_shas(self) -> dict[str, str]:
        """Fact id -> sha256 of the text its stored vector was computed from."""
        return self._read(lambda c: sql.vector_shas(c, self.source))

    def count_unembedded(self) -> int:
        """How many facts of this scope have no vector (cheap check before a backfill)."""
        return self._read(lambda c: sql.count_unembedded(c, self.source))

    def record_access(self, ids: Sequence[str], when: datetime) -> None:
        """Count an access to each fact (``accesses``: written when the database is free,
        or by ``close``)."""
        with self._lock:
            if self._conn().read_only:  # said once when the database was opened
                return
            self._accesses.count(ids, when)
            try:
                self._flush_accesses(wait=self._in_transaction)
            except (DiskFullError, ReadOnlyHomeError) as exc:  # statistics: the read goes on
                self._accesses.clear()
                if self._in_transaction:  # a save's transaction fails as a whole
                    raise
                warn_once(f"accesses:{self.path}", f"fact access counts are not kept: {exc}")

    def _flush_accesses(self, wait: bool) -> None:
        db = self._conn()
        if wait or self._in_transaction:
            self._run(self._accesses.write, write=True)
        elif not self._translated(db, lambda: try_write(db, self._accesses.write)):
            return  # another writer holds the database: the counts wait for the next call
        self._accesses.clear()

    def clear(self) -> None:
        """Drop every fact, event and file stamp of this scope (before a rebuild)."""
        self._write(lambda c: sql.clear(c, self.source))
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
        return self._read(lambda c: sql.keyword_search(c, self.source, query, filt, limit))

    def vector_search(self, query: Vector, filt: FactFilter, limit: int) -> list[tuple[str, float]]:
        """Cosine over the vectors of admitted facts: (fact id, cosine), best first."""
        matrix = self._load_matrix()
        if not matrix.ids:
            return []
        allowed = self._read(lambda c: sql.admitted_ids(c, self.source, filt))
        return matrix.search(query, allowed, limit)

    def _load_matrix(self) -> FactMatrix:
        """The scope's fact vectors as of now, following ``fact_vector_log``: a change of
        other facts (a save's row, an access count) keeps the vectors; a vector written or
        deleted by any connection is re-read alone."""
        self._matrix = self._read(lambda c: FactMatrix.read(c, self.source, self._matrix))
        return self._matrix
