"""Opening SQLite connections: driver choice, pragmas, errors and lock retries.

The driver is ``sqlean`` (a DB-API twin of ``sqlite3`` built with FTS5); without
it the store falls back to the stdlib ``sqlite3`` (whose FTS5 every supported
Python build has) and logs ONE warning per process.

Lock retries live here, in :func:`retry_locked`: WAL mode plus a busy timeout
absorbs almost all contention, and the few ``database is locked`` errors SQLite
still raises without calling the busy handler (a read transaction that wants to
write, a WAL checkpoint race, setting the journal mode) are retried with
exponential backoff before a ``StoreError`` reaches the caller.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TypeVar, cast

from memdir.errors import (
    READ_ONLY_FIX,
    DiskFullError,
    MemdirError,
    ReadOnlyHomeError,
    StoreError,
)
from memdir.store.identity import REBUILD_HINT

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5_000
RETRY_SECONDS = 30.0
# No memory map and a small page cache: the OS caches the file for every process alike,
# while each connection's own cache (malloc'd, never given back) and the pages a map
# touched count in the process's RSS; a long-running server held 64 MB of cache per
# connection and the mapped pages of a growing file (docs/benchmarks.md, "Footprint").
CACHE_KIB = 8 * 1024
READER_CACHE_KIB = 2048  # a connection that reads rows by id and, on a reload, every row once
FULL_DISK_BYTES = 1 << 20  # less free space than this makes a "disk I/O error" a full disk

T = TypeVar("T")

_warned: set[str] = set()


@dataclass(frozen=True)
class Connection:
    """An open connection and what it can do."""

    conn: sqlite3.Connection
    driver: str  # "sqlean" or "sqlite3"
    errors: tuple[type[Exception], ...]  # the driver's DatabaseError classes
    read_only: bool = False  # opened read-only: the home cannot be written


def warn_once(key: str, message: str) -> None:
    """Log ``message`` as a warning the first time ``key`` is seen in this process."""
    if key not in _warned:
        _warned.add(key)
        log.warning(message)


def _driver() -> ModuleType:
    try:
        import sqlean
    except ImportError:
        warn_once(
            "sqlean",
            "the package 'sqlean.py' is not installed; using the stdlib sqlite3",
        )
        return sqlite3
    return cast(ModuleType, sqlean)


_READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def writable(path: Path) -> bool:
    """Whether this process may write the database ``path`` (and its WAL beside it)."""
    folder = path.parent
    if not os.access(folder, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def is_read_only(exc: OSError) -> bool:
    """A read-only file system, or a folder or file this user may not write."""
    return exc.errno in _READ_ONLY_ERRNOS


def read_only_error(path: Path, cause: object) -> ReadOnlyHomeError:
    return ReadOnlyHomeError(
        f"cannot write {str(path)!r}: the home is read-only ({cause}); nothing was "
        f"changed. To write, {READ_ONLY_FIX}"
    )


def ensure_folder(path: Path) -> None:
    """Create the folder of the database ``path`` (a read-only home: ``ReadOnlyHomeError``)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if is_read_only(exc):
            raise read_only_error(path.parent, exc.strerror) from exc
        raise


def connect(path: Path, *, cache_kib: int = CACHE_KIB) -> Connection:
    """Open ``path`` with WAL, a busy timeout and foreign keys; ``cache_kib`` sizes the
    connection's page cache. A database this process may not write (a read-only home) is
    opened read-only: reads answer, writes raise ``ReadOnlyHomeError``."""
    driver = _driver()
    errors: tuple[type[Exception], ...] = (sqlite3.DatabaseError,)
    if driver is not sqlite3:
        errors = (*errors, cast(type[Exception], driver.DatabaseError))
    if not writable(path):
        return _connect_read_only(driver, path, errors, cache_kib, "a read-only home")
    try:
        conn = cast(
            sqlite3.Connection,
            driver.connect(
                str(path),
                timeout=BUSY_TIMEOUT_MS / 1000,
                check_same_thread=False,
                isolation_level=None,
            ),
        )
    except errors as exc:
        raise StoreError(f"cannot open the index database {str(path)!r}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone(), errors)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA cache_size = -{int(cache_kib)}")
    except errors as exc:
        conn.close()
        error = database_error(path, exc)
        if isinstance(error, DiskFullError) and path.exists():  # no room for its WAL: read
            return _connect_read_only(driver, path, errors, cache_kib, "the disk is full")
        raise error from exc
    return Connection(conn=conn, driver=driver.__name__, errors=errors)


def _connect_read_only(
    driver: ModuleType, path: Path, errors: tuple[type[Exception], ...], cache_kib: int, why: str
) -> Connection:
    """Open ``path`` read-only: ``mode=ro`` reads a WAL left beside it; when its shared
    memory cannot be created (a read-only folder), ``immutable=1`` reads the file alone
    (nobody can write it either)."""
    if not path.exists():
        raise read_only_error(path, "the database does not exist yet and cannot be created")
    warn_once(
        f"read-only:{path.parent}",
        f"{path.parent} cannot be written ({why}): the index is read as it is, "
        "writes are refused and access counts are not kept",
    )
    last: Exception | None = None
    for query in ("mode=ro", "mode=ro&immutable=1"):
        try:
            conn = cast(
                sqlite3.Connection,
                driver.connect(
                    f"{path.resolve().as_uri()}?{query}", uri=True,
                    timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                    isolation_level=None,
                ),
            )  # fmt: skip
        except errors as exc:
            last = exc
            continue
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA cache_size = -{int(cache_kib)}")
        except errors as exc:
            conn.close()
            last = exc
            continue
        return Connection(conn=conn, driver=driver.__name__, errors=errors, read_only=True)
    raise database_error(path, last or RuntimeError("cannot open"))


def _disk_full(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.parent).free < FULL_DISK_BYTES
    except OSError:
        return False


def reopened(db: Connection, path: Path, cache_kib: int = CACHE_KIB) -> Connection:
    """``db``, or a writable connection in its place once a database opened read-only (a
    full disk, a read-only home) can be written again (its old one is closed): an
    ``immutable`` read would not see the writes that follow."""
    if not db.read_only or not writable(path) or _disk_full(path):
        return db
    try:
        fresh = connect(path, cache_kib=cache_kib)
    except MemdirError:
        return db
    if fresh.read_only:
        fresh.conn.close()
        return db
    log.info("%s can be written again: reopened read-write", path)
    db.conn.close()
    return fresh


def _io_error_on_full_disk(path: Path, text: str) -> bool:
    """SQLite reports a full disk as "disk I/O error" when the WAL index cannot grow."""
    return "disk i/o error" in text and _disk_full(path)


def database_error(path: Path, exc: BaseException, what: str = "index database") -> MemdirError:
    """The error to raise for a driver error: locked, full disk, corrupt, or other."""
    text = str(exc).lower()
    if is_locked(exc):
        return StoreError(f"the {what} {str(path)!r} is locked: {exc}")
    if ("readonly" in text or "read-only" in text) and _disk_full(path):
        return DiskFullError(
            f"the {what} {str(path)!r} cannot grow: the disk is full; nothing was changed. "
            f"Free some space on the disk of {str(path.parent)!r} and try again"
        )
    if "readonly" in text or "read-only" in text:
        return read_only_error(path, exc)
    if "disk is full" in text or "disk full" in text or _io_error_on_full_disk(path, text):
        return DiskFullError(
            f"the {what} {str(path)!r} cannot grow: the disk is full ({exc}); nothing was "
            f"changed. Free some space on the disk of {str(path.parent)!r} and try again"
        )
    if is_corrupt(exc):
        return corrupt_error(path, exc)
    return StoreError(f"{what} error in {str(path)!r}: {exc}")


def is_corrupt(exc: BaseException) -> bool:
    """Whether a driver error says the database file is damaged (not locked, not busy).

    SQLite reports a damaged or foreign file as a plain ``DatabaseError`` ("file is not a
    database", "database disk image is malformed"), and a WAL left by a database deleted
    under a running process as "disk I/O error" (``database_error`` tells a full disk
    first). The one classifier: the store's errors and the facade's recovery use it.
    """
    if is_locked(exc):
        return False
    text = str(exc).lower()
    damaged = ("malformed", "not a database", "corrupt", "disk i/o error")
    return type(exc).__name__ == "DatabaseError" or any(word in text for word in damaged)


def corrupt_error(path: Path, exc: BaseException) -> StoreError:
    """The error for an unreadable database file: it names the rebuild command."""
    return StoreError(
        f"the index database {str(path)!r} is unreadable or corrupt ({exc}); {REBUILD_HINT} "
        "to recreate it from the markdown files"
    )


def is_locked(exc: BaseException) -> bool:
    """True when ``exc`` is SQLite's transient lock/busy error."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def retry_locked(fn: Callable[[], T], errors: tuple[type[Exception], ...]) -> T:
    """Call ``fn``, retrying on 'database is locked' with exponential backoff.

    ``fn`` must be safe to repeat: a whole write transaction, not half of one.
    After ``RETRY_SECONDS`` the lock error becomes a ``StoreError``.
    """
    delay = 0.01
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        try:
            return fn()
        except errors as exc:
            if not is_locked(exc):
                raise
            if time.monotonic() > deadline:
                raise StoreError(
                    f"the index database stayed locked for {RETRY_SECONDS:.0f} s ({exc}); "
                    "another memdir process is writing; try again"
                ) from exc
            log.debug("database locked; retrying in %.3f s", delay)
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def in_transaction(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T],
                   begin: str | None) -> T:  # fmt: skip
    """``fn(conn)`` inside one transaction opened with ``begin`` (``BEGIN``: a snapshot;
    ``BEGIN IMMEDIATE``: a write, rolled back when ``fn`` raises; None: none)."""
    if begin is None:
        return fn(conn)
    conn.execute(begin)
    try:
        result = fn(conn)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


def run(
    db: Connection,
    path: Path,
    fn: Callable[[sqlite3.Connection], T],
    begin: str | None = None,
    what: str = "index database",
) -> T:
    """``fn(conn)`` in a transaction (``in_transaction``), retried as a whole while the
    database is locked. The driver's errors become memdir's."""
    try:
        return retry_locked(lambda: in_transaction(db.conn, fn, begin), db.errors)
    except db.errors as exc:
        raise database_error(path, exc, what) from exc


def delete_database(path: Path) -> None:
    """Remove the database file and its WAL/SHM companions (used by rebuild)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
