"""Crash-safe file writes: atomic replacement and no-clobber creation.

``write_atomic`` writes a temp file in the target's folder, fsyncs it, renames it
over the target with ``os.replace`` and fsyncs the folder (POSIX), so a reader
sees either the old or the new content, never a mix, and a crash loses nothing
that was reported written. Temp files are named ``.<name>.<random>.tmp``: they
never end in ``.md``, so discovery and listings never see them.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from memdir.errors import READ_ONLY_FIX, DiskFullError, InvalidInputError, ReadOnlyHomeError

logger = logging.getLogger(__name__)

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Largest Markdown file the workspace writes (2 MB); bigger content is refused."""

_NEW_FILE_MODE = 0o666  # the process umask narrows it, as for any new file
_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")
STALE_TEMP_SECONDS = 3600
"""A temp file this old belongs to a writer that died (a write takes milliseconds)."""


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_READ_ONLY = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def is_disk_full(exc: OSError) -> bool:
    """No space left, quota exceeded, or the file size limit reached."""
    return exc.errno in _FULL


@contextlib.contextmanager
def disk_errors(path: Path) -> Iterator[None]:
    """Turn a full disk while writing ``path`` into ``DiskFullError`` and a read-only home
    into ``ReadOnlyHomeError`` (others pass through)."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _READ_ONLY:
            raise ReadOnlyHomeError(
                f"cannot write {path.name!r}: the home is read-only ({exc.strerror}); nothing "
                f"was changed. To write, {READ_ONLY_FIX}"
            ) from exc
        if not is_disk_full(exc):
            raise
        raise DiskFullError(
            f"cannot write {path.name!r}: the disk is full ({exc.strerror}); the file was left "
            f"as it was. Free some space on the disk of {str(path.parent)!r} and try again"
        ) from exc


def check_size(text: str, what: str) -> bytes:
    """Encode ``text`` as UTF-8, refusing more than ``MAX_FILE_BYTES``."""
    data = text.encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInputError(
            f"{what} is {len(data):,} bytes, over the limit of {MAX_FILE_BYTES:,} bytes "
            "(2 MB); split it into several smaller files"
        )
    return data


def fsync_directory(directory: Path) -> None:
    """Flush a folder's entries to disk so a rename survives a crash (POSIX only)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


_TEMP_EXTRA_BYTES = len(".." + "0" * 12 + ".tmp")
_MAX_NAME_BYTES = 255  # a file name's limit on the common file systems


def _temp_stem(name: str) -> str:
    """``name`` cut so that ``.<name>.<12 hex>.tmp`` fits a file name: a name near the
    limit (memdir accepts 255 bytes) would otherwise fail its own temp file."""
    room = _MAX_NAME_BYTES - _TEMP_EXTRA_BYTES
    return name.encode("utf-8")[:room].decode("utf-8", "ignore")


def _write_temp(directory: Path, name: str, data: bytes) -> Path:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        temp = directory / f".{_temp_stem(name)}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(temp, flags, _NEW_FILE_MODE)
        except FileExistsError:
            continue
        break
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return temp


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically; the parent folder must exist.

    An existing file keeps its permission bits. Refuses content over
    ``MAX_FILE_BYTES`` with ``InvalidInputError`` before touching the disk.
    """
    data = check_size(text, f"content for {path.name!r}")
    with disk_errors(path):
        temp = _write_temp(path.parent, path.name, data)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(temp, stat.S_IMODE(os.stat(path).st_mode))
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        fsync_directory(path.parent)
    logger.debug("wrote %s (%d bytes)", path, len(data))


def create_exclusive(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` only if nothing exists there; True if it did.

    The content appears all at once (a fully written temp file is hard-linked into
    place), so a concurrent reader never sees a half-written file and two
    concurrent creators cannot both win. Filesystems without hard links fall back
    to an exclusive create.
    """
    data = check_size(text, f"content for {path.name!r}")
    with disk_errors(path):
        return _create_linked(path, data)


def _create_linked(path: Path, data: bytes) -> bool:
    temp = _write_temp(path.parent, path.name, data)
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    except OSError:
        return _create_exclusive_plain(path, data)
    finally:
        temp.unlink(missing_ok=True)
    fsync_directory(path.parent)
    return True


def _create_exclusive_plain(path: Path, data: bytes) -> bool:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags, _NEW_FILE_MODE)
    except FileExistsError:
        return False
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def read_markdown(path: Path, *, strict: bool = True) -> str:
    """Read a UTF-8 file as text, keeping its line endings.

    With ``strict`` a file that is not valid UTF-8 raises ``InvalidInputError``
    (so an edit can never corrupt it); otherwise bad bytes become U+FFFD.
    """
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not strict:
            return data.decode("utf-8", errors="replace")
        raise InvalidInputError(
            f"{path.name!r} is not valid UTF-8 text ({exc.reason} at byte {exc.start}); "
            "convert it to UTF-8 before reading or editing it with memdir"
        ) from exc


def sweep_stale_temp_files(root: Path, min_age_s: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Delete temp files that killed writers left under ``root``; return what was removed.

    Only names of the form ``.<name>.<12 hex>.tmp`` (made by ``_write_temp``) older
    than ``min_age_s`` are touched, so a write in progress is never disturbed.
    They are hidden and never indexed; sweeping only reclaims their space.
    """
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    cutoff = time.time() - min_age_s
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if not _TEMP_NAME.fullmatch(name):
                continue
            with contextlib.suppress(FileNotFoundError):
                if path.lstat().st_mtime < cutoff and stat.S_ISREG(path.lstat().st_mode):
                    path.unlink()
                    removed.append(path)
    if removed:
        logger.info("removed %d stale temp file(s) under %s", len(removed), root)
    return removed
