"""The facts store on PostgreSQL: ``SqliteFactStore``'s API for memdir processes that share facts.

``PostgresFactStore(dsn, schema="memdir", scope="global")`` keeps the facts of
one scope (``global`` or ``agent:<id>``) in the tables of ``facts_sql.py``,
inside the index's schema. ``__init__`` stores arguments; ``open()`` /
``connect()`` / ``with`` connect, create the pgvector extension and the schema
if needed, and apply pending fact migrations.

Where SQLite takes a write transaction (``BEGIN IMMEDIATE``), this store runs a
PostgreSQL transaction that first takes advisory locks: a shared lock on the
facts of the schema, then an exclusive lock on the facts of its scope, so
writers of one scope queue up and writers of different scopes run side by
side. Migrations, binding the embedder identity and ``clear`` take the schema's
facts lock exclusively. Upserts are idempotent (``ON CONFLICT``); deadlocks and
serialization failures are retried as a whole transaction.

Keyword scores are ``ts_rank_cd(fts, query)`` (>= 0, higher is better, like
SQLite's ``-bm25()``); vector scores are cosine similarities.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from memdir.errors import InvalidInputError, StoreError
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
    identity_rows,
    retired_from_row,
    retired_where,
)
from memdir.store.identity import check_fact_identity
from memdir.store.postgres import facts_sql as sql
from memdir.store.postgres import schema as ddl
from memdir.store.postgres.connect import (
    Connections,
    check_schema_name,
    describe_dsn,
    lock_key,
    lock_schema,
    run_retrying,
    translate_errors,
)
from memdir.store.postgres.fulltext import phrases_of, websearch_text
from memdir.store.times import to_us

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")
Conn = Any  # psycopg.Connection[Any]; kept loose so callbacks type-check without psycopg
_ERRORS = "facts database"  # what a driver error is reported as
_SCOPE = re.compile(r"global|agent:[a-z0-9][a-z0-9_-]{0,63}")


class PostgresFactStore:
    """The facts tables of one PostgreSQL schema, for one ``scope``.

    One connection per store, guarded by a lock, so threads may share a store;
    processes and hosts coordinate through advisory locks.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "memdir",
        source: str = "global",
        connect_timeout: float = 10.0,
    ) -> None:
        self.dsn = dsn
        self.schema = schema
        self.source = source
        self._db = Connections(dsn, schema, 1, connect_timeout)

    @classmethod
    def open(cls, dsn: str, *, schema: str = "memdir", source: str = "global") -> PostgresFactStore:
        store = cls(dsn, schema=schema, source=source)
        store.connect()
        return store

    @property
    def location(self) -> str:
        """Where the facts live, without the password."""
        return f"{describe_dsn(self.dsn)}#{self.schema}"

    @property
    def path(self) -> str:
        """The location, for messages (``SqliteFactStore.path`` is the database file)."""
        return self.location

    def connect(self) -> None:
        if self._db.is_open:
            return
        check_schema_name(self.schema)
        if not _SCOPE.fullmatch(self.source):
            raise InvalidInputError(
                f"invalid facts source {self.source!r}; use 'global' or 'agent:<agent id>'"
            )
        ddl.start_with_extension(self._db, self.location, _ERRORS, self._migrate)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> PostgresFactStore:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _migrations(self) -> ddl.MigrationPlan:
        return ddl.MigrationPlan(
            "fact_migrations",
            sql.FACT_MIGRATIONS,
            owner=f"the facts tables in {self.location!r} have",
            advice="upgrade memdir or run `memdir index rebuild`",
        )

    def _migrate(self) -> None:
        plan = self._migrations()

        def migrate(conn: Conn) -> None:
            lock_schema(conn, self.schema)  # serialises with the index's own migrations
            ddl.ensure_schema(conn, self.schema)
            ddl.apply_migrations(conn, self.schema, plan)

        if self._read(lambda c: ddl.pending_migrations(c, self.schema, plan)):
            self._write(migrate, exclusive=True)

    # -- transactions ------------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if not self._db.is_open:
            raise StoreError(f"the facts store {self.location!r} is not open; call open() first")
        with translate_errors(self.location, _ERRORS), self._db.connection() as conn:
            yield conn

    def _read(self, fn: Callable[[Conn], T]) -> T:
        with self._connection() as conn:
            return run_retrying(lambda: fn(conn))

    def _lock(self, conn: Conn, exclusive: bool) -> None:
        """Inside a transaction: the schema's facts lock (shared) and the scope's, or the
        schema's exclusively."""
        schema_key = lock_key("memdir-facts", self.schema)
        if exclusive:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (schema_key,))
        else:
            scope_key = lock_key("memdir-facts", self.schema, self.source)
            conn.execute("SELECT pg_advisory_xact_lock_shared(%s)", (schema_key,))
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (scope_key,))

    def _write(self, fn: Callable[[Conn], T], *, exclusive: bool = False) -> T:
        """Run ``fn`` in one transaction holding the facts locks; retried on deadlock.

        Inside ``transaction()`` it runs in a savepoint of that transaction.
        """

        def attempt(conn: Conn) -> T:
            with conn.transaction():
                self._lock(conn, exclusive)
                return fn(conn)

        with self._connection() as conn:
            return run_retrying(lambda: attempt(conn))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run every call of the block in one transaction holding the scope's facts lock.

        The store's one connection is held for the block (its lock is re-entrant),
        so the calls inside join the transaction as savepoints; other writers of
        the scope wait for it. An exception rolls everything back.
        """
        with self._connection() as conn, conn.transaction():
            self._lock(conn, exclusive=False)
            yield

    def _rows(self, query: str, args: Sequence[object]) -> list[Any]:
        return self._read(lambda c: c.execute(query, args).fetchall())

    # -- embedder identity -------------------------------------------------------------------

    @property
    def identity(self) -> EmbedderIdentity | None:
        meta = {str(k): str(v) for k, v in self._rows("SELECT key, value FROM fact_meta", ())}
        return EmbedderIdentity.from_meta(meta, prefix="")

    def bind_identity(self, identity: EmbedderIdentity) -> None:
        """Record the embedder of the fact vectors, or check it matches the recorded one."""
        recorded = self.identity
        if recorded is None:
            rows = identity_rows(identity)

            def bind(conn: Conn) -> None:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO fact_meta (key, value) VALUES (%s, %s) "
                        "ON CONFLICT (key) DO NOTHING",
                        rows,
                    )

            self._write(bind, exclusive=True)
            recorded = self.identity  # another process may have bound first
        if recorded is not None:
            check_fact_identity(self.location, recorded, identity)

    # -- files and events --------------------------------------------------------------------

    def file_stamps(self) -> dict[str, FactStamp]:
        rows = self._rows(
            "SELECT path, sha256, size, mtime_ns FROM fact_files WHERE scope = %s", (self.source,)
        )
        return {str(r[0]): FactStamp(str(r[0]), str(r[1]), int(r[2]), int(r[3])) for r in rows}

    def event_paths(self) -> set[str]:
        """Every file that holds recorded events (stamped by a sync or not)."""
        query = "SELECT DISTINCT path FROM fact_events WHERE scope = %s"
        return {str(r[0]) for r in self._rows(query, (self.source,))}

    def replace_file_events(
        self, changed: Sequence[tuple[FactStamp, Sequence[FactEvent]]], removed: Sequence[str]
    ) -> None:
        """Replace the events (and stamps) of changed files and drop removed files, atomically."""
        paths = [*removed, *(stamp.path for stamp, _ in changed)]

        def write(conn: Conn) -> None:
            for table in ("fact_events", "fact_files"):
                conn.execute(
                    f"DELETE FROM {table} WHERE scope = %s AND path = ANY(%s)", (self.source, paths)
                )
            with conn.cursor() as cur:
                stamps = [(self.source, s.path, s.sha256, s.size, s.mtime_ns) for s, _ in changed]
                if stamps:
                    cur.executemany(sql.UPSERT_STAMP, stamps)
            self._insert_events(conn, [e for _, events in changed for e in events])

        self._write(write)

    def _insert_events(self, conn: Conn, events: Sequence[FactEvent]) -> None:
        if events:
            with conn.cursor() as cur:
                cur.executemany(
                    sql.UPSERT_EVENT, [sql.event_values(self.source, e) for e in events]
                )

    def all_events(self, path: str | None = None) -> list[FactEvent]:
        """Every recorded event of this scope, or of one file."""
        query = (
            "SELECT path, line, kind, fact_id, at_us, text, category, importance, supersedes, "
            "reason, until_us FROM fact_events WHERE scope = %s"
        )
        args: list[object] = [self.source]
        if path is not None:
            query, args = query + " AND path = %s", [*args, path]
        return [sql.event_from_row(r) for r in self._rows(query, args)]

    # -- facts -------------------------------------------------------------------------------

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

        def write(conn: Conn) -> None:
            self._insert_events(conn, events)
            with conn.cursor() as cur:
                if stamps:
                    cur.executemany(
                        sql.UPSERT_STAMP,
                        [(self.source, s.path, s.sha256, s.size, s.mtime_ns) for s in stamps],
                    )
                if upserts:
                    cur.executemany(
                        sql.UPSERT_FACT, [sql.fact_values(self.source, f) for f in upserts]
                    )
                if deletes:
                    cur.execute(
                        "DELETE FROM facts WHERE scope = %s AND id = ANY(%s)",
                        (self.source, list(deletes)),
                    )
                for fid, (sha, vector) in (vectors or {}).items():
                    data = np.asarray(vector, dtype=np.float32).reshape(-1)
                    cur.execute(sql.UPSERT_VECTOR, (sha, data, self.source, fid))

        self._write(write)

    def get_facts(self, ids: Iterable[str]) -> dict[str, Fact]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        query = f"SELECT {sql.COLUMNS} FROM facts WHERE scope = %s AND id = ANY(%s)"
        return {str(r[0]): sql.fact_from_row(r) for r in self._rows(query, (self.source, wanted))}

    def list_facts(self, filt: FactFilter) -> list[Fact]:
        """Facts admitted by ``filt``, oldest first."""
        clause, args = sql.where(self.source, filt)
        query = f"SELECT {sql.COLUMNS} FROM facts f WHERE {clause} ORDER BY f.recorded_us, f.id"
        return [sql.fact_from_row(r) for r in self._rows(query, args)]

    def retired_lines(
        self, sources: Sequence[str], paths: Sequence[str] | None = None
    ) -> list[RetiredLine]:
        """The note lines of ``scopes`` (in ``paths`` when given) that hold no current fact
        (``RetiredLine``)."""
        if not sources or (paths is not None and not paths):
            return []
        where = "e.scope = ANY(%s)" + ("" if paths is None else " AND e.path = ANY(%s)")
        args: tuple[list[str], ...] = (
            (list(sources),) if paths is None else (list(sources), list(paths))
        )
        query = (
            f"SELECT {RETIRED_COLUMNS} FROM fact_events e LEFT JOIN facts f "
            f"ON f.id = e.fact_id AND f.scope = e.scope WHERE {where} AND {retired_where()}"
        )
        return [retired_from_row(r) for r in self._rows(query, args)]

    def vector_shas(self) -> dict[str, str]:
        """Fact id -> sha256 of the text its stored vector was computed from."""
        query = "SELECT id, text_sha256 FROM fact_vectors WHERE scope = %s"
        return {str(r[0]): str(r[1]) for r in self._rows(query, (self.source,))}

    def count_unembedded(self) -> int:
        """How many facts of this scope have no vector (cheap check before a backfill)."""
        query = (
            "SELECT count(*) FROM facts f LEFT JOIN fact_vectors v "
            "ON v.scope = f.scope AND v.id = f.id WHERE f.scope = %s AND v.id IS NULL"
        )
        return int(self._rows(query, (self.source,))[0][0])

    def record_access(self, ids: Sequence[str], when: datetime) -> None:
        if not ids:
            return
        rows = [(to_us(when), self.source, fid) for fid in ids]

        def write(conn: Conn) -> None:
            with conn.cursor() as cur:
                cur.executemany(
                    "UPDATE facts SET access_count = access_count + 1, last_access_us = %s "
                    "WHERE scope = %s AND id = %s",
                    rows,
                )

        self._write(write)

    def clear(self) -> None:
        """Drop every fact, event and file stamp of this scope (before a rebuild).

        The embedder identity goes too once no scope has facts left.
        """

        def clear(conn: Conn) -> None:
            for table in ("facts", "fact_events", "fact_files"):  # vectors go by cascade
                conn.execute(f"DELETE FROM {table} WHERE scope = %s", (self.source,))
            if conn.execute("SELECT 1 FROM facts LIMIT 1").fetchone() is None:
                conn.execute("DELETE FROM fact_meta")

        self._write(clear, exclusive=True)

    # -- search ------------------------------------------------------------------------------

    def keyword_search(
        self, query: KeywordQuery, filt: FactFilter, limit: int
    ) -> list[tuple[str, float]]:
        """Full text over admitted facts: (fact id, ``ts_rank_cd`` >= 0) for the OR of the
        query's terms (``fulltext.websearch_text``), best first."""
        phrases = phrases_of(query)
        if not phrases:
            return []
        clause, args = sql.where(self.source, filt)
        statement = (
            "SELECT f.id, ts_rank_cd(f.fts, q) AS score FROM facts f, "
            "websearch_to_tsquery('english'::regconfig, %s) AS q "
            f"WHERE f.fts @@ q AND {clause} ORDER BY score DESC, f.recorded_us, f.id LIMIT %s"
        )
        rows = self._rows(statement, [websearch_text(phrases), *args, limit])
        return [(str(fid), max(0.0, float(score))) for fid, score in rows]

    def vector_search(self, query: Vector, filt: FactFilter, limit: int) -> list[tuple[str, float]]:
        """Cosine over the vectors of admitted facts (an exact scan): (fact id, cosine), best first.

        A zero vector has no direction: its cosine counts as 0, as in SQLite.
        """
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        clause, args = sql.where(self.source, filt)
        statement = (
            "SELECT f.id, 1 - (v.embedding <=> %s) AS score FROM fact_vectors v "
            "JOIN facts f ON f.scope = v.scope AND f.id = v.id "
            f"WHERE {clause} ORDER BY v.embedding <=> %s, f.recorded_us, f.id"
        )
        rows = self._rows(statement, [vector, *args, vector])
        scored = [(str(fid), _finite(score)) for fid, score in rows]
        return sorted(scored, key=lambda hit: -hit[1])[:limit]


def _finite(score: object) -> float:
    value = float(score)  # type: ignore[arg-type]
    return 0.0 if math.isnan(value) else value
