"""The workspace files table in PostgreSQL: every agent's Markdown, keyed by (source, path).

``PostgresFileTable(dsn, schema="memdir_files")`` holds one row per file of
the home: ``source`` is ``global`` (``<home>/workspace``) or ``agent:<id>``
(``<home>/agents/<id>``), ``path`` the canonical workspace-relative POSIX path
(``memory/2026-03-01.md``), ``content`` the exact bytes (``bytea``: any
encoding, NULs included), their ``sha256`` and size, and ``updated_at`` (the
file's modification time when it was imported).

The table lives in a schema of its own, never the index's: ``memdir index
rebuild`` drops the index schema, and these rows are the files themselves, not
derived data. Every write is one transaction holding an advisory lock on its
(source, path), so concurrent writers of one file queue up and each file is
replaced whole or not at all. Paths and agent ids are checked with the
workspace's own validators before they enter the table.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, TypeVar

from memdir.errors import InvalidInputError, InvalidPathError, StoreError
from memdir.home import AGENT_PREFIX, GLOBAL_SOURCE
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
from memdir.store.times import from_us, to_us
from memdir.workspace import validate_agent_id, validate_relative_path

T = TypeVar("T")
Conn = Any  # psycopg.Connection[Any]
PutAction = Literal["created", "updated", "unchanged", "kept"]
DEFAULT_SCHEMA = "memdir_files"
_ERRORS = "workspace files"  # what a driver error is reported as

_MIGRATIONS: list[tuple[str, list[str]]] = [
    (
        "w001_workspace_files",
        [
            """
            CREATE TABLE workspace_files (
                source text NOT NULL,
                path text NOT NULL,
                content bytea NOT NULL,
                sha256 text NOT NULL,
                size bigint NOT NULL,
                updated_at timestamptz NOT NULL,
                PRIMARY KEY (source, path)
            )
            """
        ],
    )
]


@dataclass(frozen=True)
class FileInfo:
    """One file of the table, without its content."""

    source: str
    path: str
    sha256: str
    size: int
    updated_at: datetime

    @property
    def updated_us(self) -> int:
        return to_us(self.updated_at)


@dataclass(frozen=True)
class StoredFile:
    """One file of the table with its exact bytes."""

    info: FileInfo
    content: bytes


def check_source(source: str) -> str:
    """Return ``source`` if it is ``global`` or ``agent:<valid agent id>``."""
    if source == GLOBAL_SOURCE:
        return source
    if isinstance(source, str) and source.startswith(AGENT_PREFIX):
        validate_agent_id(source[len(AGENT_PREFIX) :])
        return source
    raise InvalidInputError(
        f"invalid workspace source {source!r}; use 'global' or 'agent:<agent id>'"
    )


def check_path(path: str) -> str:
    """Return ``path`` if it is a valid workspace Markdown path in canonical form."""
    canonical = str(validate_relative_path(path))
    if canonical != path:
        raise InvalidPathError(
            f"workspace path {path!r} is not in canonical form; store it as {canonical!r}"
        )
    return canonical


def decide_put(
    existing: FileInfo | None, sha256: str, updated_us: int, keep_newer: bool
) -> PutAction:
    """What writing content with ``sha256`` and time ``updated_us`` over ``existing`` does.

    Same content: unchanged. Different content on a newer row with
    ``keep_newer``: kept. Otherwise created or updated.
    """
    if existing is None:
        return "created"
    if existing.sha256 == sha256:
        return "unchanged"
    if keep_newer and existing.updated_us > updated_us:
        return "kept"
    return "updated"


def _info(row: Any) -> FileInfo:
    source, path, sha, size, updated = row
    return FileInfo(str(source), str(path), str(sha), int(size), updated.astimezone(UTC))


class PostgresFileTable:
    """The ``workspace_files`` table of one schema.

    ``__init__`` stores arguments; ``open()`` / ``connect()`` / ``with`` connect
    and create the schema and table when missing. One connection, guarded by a
    lock, so threads may share a table.
    """

    def __init__(
        self, dsn: str, schema: str = DEFAULT_SCHEMA, *, connect_timeout: float = 10.0
    ) -> None:
        self.dsn = dsn
        self.schema = schema
        self._db = Connections(dsn, schema, 1, connect_timeout)
        self._conn: Conn | None = None
        self._lock = threading.RLock()

    @classmethod
    def open(cls, dsn: str, schema: str = DEFAULT_SCHEMA) -> PostgresFileTable:
        table = cls(dsn, schema)
        table.connect()
        return table

    @property
    def location(self) -> str:
        return f"{describe_dsn(self.dsn)}#{self.schema}"

    def connect(self) -> None:
        if self._conn is not None:
            return
        check_schema_name(self.schema)
        self._conn = self._db.open_raw()  # no pgvector needed: a plain connection
        try:
            with translate_errors(self.location, _ERRORS):
                self._conn.execute(f'SET search_path TO "{self.schema}"')
                self._migrate(self._conn)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> PostgresFileTable:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _migrate(self, conn: Conn) -> None:
        plan = ddl.MigrationPlan(
            "file_migrations",
            _MIGRATIONS,
            owner=f"the files table in {self.location!r} has",
            advice="upgrade memdir",
        )
        with conn.transaction():
            lock_schema(conn, self.schema)
            ddl.ensure_schema(conn, self.schema)
            ddl.apply_migrations(conn, self.schema, plan)

    # -- transactions ------------------------------------------------------------------------

    def _run(self, fn: Callable[[Conn], T]) -> T:
        with self._lock, translate_errors(self.location, _ERRORS):
            if self._conn is None:
                raise StoreError(
                    f"the files table {self.location!r} is not open; call open() first"
                )
            conn = self._conn
            return run_retrying(lambda: fn(conn))

    # -- files -------------------------------------------------------------------------------

    def put(
        self,
        source: str,
        path: str,
        content: bytes,
        *,
        updated_at: datetime | None = None,
        keep_newer: bool = False,
    ) -> PutAction:
        """Store ``content`` as ``path`` of ``source`` (atomic; see ``decide_put``).

        ``updated_at`` defaults to now; with ``keep_newer`` a row updated later
        than ``updated_at`` keeps its content (the answer is ``"kept"``).
        """
        check_source(source)
        check_path(path)
        data = bytes(content)
        sha = hashlib.sha256(data).hexdigest()
        when = from_us(to_us(updated_at or datetime.now(UTC)))  # what timestamptz keeps

        def write(conn: Conn) -> PutAction:
            with conn.transaction():
                key = lock_key("memdir-files", self.schema, source, path)
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
                row = conn.execute(
                    "SELECT source, path, sha256, size, updated_at FROM workspace_files "
                    "WHERE source = %s AND path = %s FOR UPDATE",
                    (source, path),
                ).fetchone()
                action = decide_put(
                    None if row is None else _info(row), sha, to_us(when), keep_newer
                )
                if action in ("created", "updated"):
                    conn.execute(
                        "INSERT INTO workspace_files (source, path, content, sha256, size, "
                        "updated_at) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (source, path) "
                        "DO UPDATE SET content = excluded.content, sha256 = excluded.sha256, "
                        "size = excluded.size, updated_at = excluded.updated_at",
                        (source, path, data, sha, len(data), when),
                    )
                return action

        return self._run(write)

    def get(self, source: str, path: str) -> StoredFile | None:
        """The file with its bytes, or None."""
        row = self._run(
            lambda c: c.execute(
                "SELECT source, path, sha256, size, updated_at, content FROM workspace_files "
                "WHERE source = %s AND path = %s",
                (source, path),
            ).fetchone()
        )
        return None if row is None else StoredFile(_info(row[:5]), bytes(row[5]))

    def get_many(self, keys: Sequence[tuple[str, str]]) -> list[StoredFile]:
        """The files named by (source, path) ``keys`` that exist, with their bytes (one query)."""
        if not keys:
            return []
        sources, paths = [k[0] for k in keys], [k[1] for k in keys]
        rows = self._run(
            lambda c: c.execute(
                "SELECT f.source, f.path, f.sha256, f.size, f.updated_at, f.content "
                "FROM workspace_files f JOIN unnest(%s::text[], %s::text[]) AS k(source, path) "
                "ON f.source = k.source AND f.path = k.path ORDER BY f.source, f.path",
                (sources, paths),
            ).fetchall()
        )
        return [StoredFile(_info(row[:5]), bytes(row[5])) for row in rows]

    def list_files(self, source: str | Sequence[str] | None = None) -> list[FileInfo]:
        """Every file (of ``source``, of several sources, or of all), by source then path.

        One query; no content.
        """
        query = "SELECT source, path, sha256, size, updated_at FROM workspace_files"
        args: tuple[object, ...] = ()
        if isinstance(source, str):
            query, args = query + " WHERE source = %s", (source,)
        elif source is not None:
            query, args = query + " WHERE source = ANY(%s::text[])", (list(source),)
        rows = self._run(lambda c: c.execute(query + " ORDER BY source, path", args).fetchall())
        return [_info(r) for r in rows]

    def list_sources(self) -> list[str]:
        """The sources that have at least one file, sorted."""
        rows = self._run(
            lambda c: c.execute(
                "SELECT DISTINCT source FROM workspace_files ORDER BY source"
            ).fetchall()
        )
        return [str(row[0]) for row in rows]

    def delete(self, source: str, path: str) -> bool:
        """Remove one file; True when it existed."""

        def remove(conn: Conn) -> bool:
            with conn.transaction():
                key = lock_key("memdir-files", self.schema, source, path)
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
                cur = conn.execute(
                    "DELETE FROM workspace_files WHERE source = %s AND path = %s", (source, path)
                )
                return bool(cur.rowcount)

        return self._run(remove)
