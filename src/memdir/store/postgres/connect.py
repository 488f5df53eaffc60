"""Connections to PostgreSQL: the driver import, the pool, advisory locks and retries.

psycopg 3 and pgvector are optional dependencies: they are imported when a
store connects, and their absence becomes a ``DependencyError`` naming
``pip install 'memdir[postgres]'``.

A store holds one connection guarded by a lock (``pool_size=1``, the default) or
a ``psycopg_pool.ConnectionPool``. Every connection runs in autocommit mode with
``search_path`` set to the store's schema followed by the schema of the pgvector
extension, so the SQL of this package never names a schema.

Cross-process safety rests on PostgreSQL itself: every write transaction takes
``pg_advisory_xact_lock`` on each source it touches (sorted, so two writers never
deadlock) and a shared lock on the schema, which schema-wide changes (migrations,
binding an embedder, ``clear``) take exclusively. Deadlocks and serialization
failures that still happen are retried as a whole transaction.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from memdir.errors import InvalidInputError, StoreError, missing_dependency

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

T = TypeVar("T")
RETRY_SECONDS = 30.0
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def import_driver() -> Any:
    """The ``psycopg`` module, or a ``DependencyError`` naming the extra to install."""
    try:
        import pgvector.psycopg  # noqa: F401  (checked here; registered per connection)
        import psycopg
    except ImportError as exc:
        name = "pgvector" if "pgvector" in str(exc) else "psycopg"
        raise missing_dependency(name, "postgres") from exc
    return psycopg


def lock_key(*parts: str) -> int:
    """A stable signed 64-bit advisory-lock key for ``parts`` (same in every process)."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def describe_dsn(dsn: str) -> str:
    """The DSN without its password, for messages and ``IndexStats.db_path``."""
    driver = import_driver()
    try:
        parts = driver.conninfo.conninfo_to_dict(dsn)
    except driver.ProgrammingError:
        return "<unparsable DSN>"
    shown = {k: v for k, v in parts.items() if k in ("host", "port", "dbname", "user")}
    return "postgresql://" + " ".join(f"{k}={v}" for k, v in sorted(shown.items()))


def check_schema_name(schema: str) -> str:
    """Return ``schema`` if it is safe to quote into SQL, else raise ``InvalidInputError``."""
    if not _SCHEMA_NAME.fullmatch(schema):
        raise InvalidInputError(
            f"invalid schema name {schema!r}; use lower-case letters, digits and _"
        )
    return schema


@contextmanager
def translate_errors(location: str, what: str) -> Iterator[None]:
    """Turn driver errors into ``StoreError``: a lost connection, or ``{what} error``."""
    driver = import_driver()
    try:
        yield
    except driver.OperationalError as exc:
        raise StoreError(
            f"lost the PostgreSQL connection to {location} ({exc}); check that the "
            "server is up and try again"
        ) from exc
    except driver.Error as exc:
        raise StoreError(f"{what} error in {location!r}: {exc}") from exc


def is_retryable(exc: BaseException) -> bool:
    """Deadlocks and serialization failures: the whole transaction may run again."""
    return getattr(exc, "sqlstate", None) in ("40P01", "40001")


def run_retrying(fn: Callable[[], T]) -> T:
    """Call ``fn`` (one whole transaction), retrying deadlocks with exponential backoff."""
    driver = import_driver()
    delay = 0.01
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        try:
            return fn()
        except driver.Error as exc:
            if not is_retryable(exc) or time.monotonic() > deadline:
                raise
            log.debug("transaction conflict (%s); retrying in %.3f s", exc.sqlstate, delay)
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def take_locks(conn: psycopg.Connection[Any], schema: str, sources: Sequence[str]) -> None:
    """Inside a transaction: share the schema lock, then lock each source (sorted keys)."""
    conn.execute("SELECT pg_advisory_xact_lock_shared(%s)", (lock_key("memdir", schema),))
    for key in sorted({lock_key("memdir", schema, s) for s in sources}):
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))


def lock_schema(conn: psycopg.Connection[Any], schema: str) -> None:
    """Inside a transaction: the exclusive schema lock (migrations, bind, clear)."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("memdir", schema),))


class Connections:
    """Where a store gets its connections: one guarded connection or a pool."""

    def __init__(self, dsn: str, schema: str, pool_size: int, connect_timeout: float) -> None:
        self.dsn = dsn
        self.schema = schema
        self.pool_size = pool_size
        self.connect_timeout = connect_timeout
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[Any] | None = None
        self._pool: Any = None
        self._search_path = ""

    def open_raw(self) -> psycopg.Connection[Any]:
        """A new autocommit connection with no schema set up (for bootstrap and locks)."""
        driver = import_driver()
        try:
            conn: psycopg.Connection[Any] = driver.connect(
                self.dsn, autocommit=True, connect_timeout=max(1, int(self.connect_timeout))
            )
        except driver.Error as exc:
            raise StoreError(
                f"cannot connect to PostgreSQL at {describe_dsn(self.dsn)}: {exc}; check "
                "store.dsn and that the server is running"
            ) from exc
        return conn

    def start(self, search_path: str) -> None:
        """Open the connection (or pool) with ``search_path`` set on each connection."""
        self._search_path = search_path
        if self.pool_size <= 1:
            conn = self.open_raw()
            self._configure(conn)
            self._conn = conn
            return
        try:
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise missing_dependency("psycopg-pool", "postgres") from exc
        self._pool = ConnectionPool(
            self.dsn,
            min_size=1,
            max_size=self.pool_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            open=True,
            timeout=self.connect_timeout,
        )

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        from pgvector.psycopg import register_vector

        conn.execute(f"SET search_path TO {self._search_path}")
        register_vector(conn)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        if self._pool is not None:
            with self._pool.connection() as pooled:
                yield pooled
            return
        with self._lock:
            if self._conn is None:
                raise StoreError(
                    f"the index store at {describe_dsn(self.dsn)} is not open; call open() first"
                )
            yield self._conn

    @property
    def is_open(self) -> bool:
        return self._conn is not None or self._pool is not None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._pool is not None:
                self._pool.close()
                self._pool = None
