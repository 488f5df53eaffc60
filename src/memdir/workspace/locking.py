"""Exclusive cross-process locks on workspace files.

On POSIX the lock is ``fcntl.flock`` on the file itself. A writer that replaces
the file (``write_atomic``) holds the lock while it renames, so a waiting
appender could end up holding a lock on the old, unlinked file; ``lock_file``
therefore re-checks after locking that the path still names the locked file and
retries if not. Elsewhere a sidecar ``.<name>.lock`` file is locked with
``filelock``, whose path never changes.

Locks are per open file, so threads of one process exclude each other as well
as processes do.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memdir.workspace.atomic import disk_errors

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (held.st_dev, held.st_ino)


def _open_locked(path: Path, create: bool) -> int:
    flags = os.O_RDWR | (os.O_CREAT if create else 0)
    while True:
        fd = os.open(path, flags, 0o666)  # FileNotFoundError when missing and not create
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        if _same_file(fd, path):
            return fd
        os.close(fd)  # replaced (or removed) while we waited: lock the current file


@contextmanager
def lock_file(path: Path, *, create: bool = False) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` for the duration of the block.

    With ``create`` a missing file is created empty first; without it a missing
    file raises ``FileNotFoundError``. Read and write ``path`` by name inside the
    block: the lock guarantees the name refers to the locked file.
    """
    if fcntl is None:  # pragma: no cover - Windows
        with _sidecar_lock(path, create):
            yield
        return
    with disk_errors(path):  # a read-only home: ReadOnlyHomeError, not a bare OSError
        fd = _open_locked(path, create)
    try:
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


@contextmanager
def _sidecar_lock(path: Path, create: bool) -> Iterator[None]:  # pragma: no cover - Windows
    from filelock import FileLock

    with FileLock(str(path.with_name(f".{path.name}.lock"))):
        if create:
            path.touch(exist_ok=True)
        elif not path.exists():
            raise FileNotFoundError(path)
        yield
