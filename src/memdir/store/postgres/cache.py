"""The local side of ``WorkspaceMirror``: what a cached workspace last agreed with the table.

Each workspace pulled from the files table keeps a hidden ``.memdir-mirror/``
folder: ``state.json`` (per file: the sha256 the mirror last agreed with the
table, and the local file's stat then, so an unchanged file is never read
again), a ``lock`` file that serialises pulls and pushes of the processes
sharing one home, and ``conflicts/``, where a local copy is saved before a pull
overwrites it. Discovery, listings and ``memdir import`` skip hidden entries.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, NamedTuple

from memdir.errors import InvalidInputError
from memdir.store.postgres.file_table import check_path
from memdir.store.postgres.files import write_file_bytes
from memdir.workspace import list_markdown, lock_file

log = logging.getLogger(__name__)

PullAction = Literal["same", "fetch", "keep", "conflict", "remove", "forget"]
STATE_DIR = ".memdir-mirror"


class Known(NamedTuple):
    """What the mirror last agreed with the table for one file, and the local file's stat."""

    sha256: str
    stamp: tuple[int, int, int, int]  # size, mtime_ns, inode, ctime_ns


def decide_pull(row: str | None, base: str | None, local: str | None) -> PullAction:
    """What a pull does with one file, from three sha256s (None: absent or unknown).

    ``row`` is the table's, ``base`` the one the mirror last agreed on, ``local``
    the local file's. The table wins when only it changed or both did
    (``conflict``: the local copy is saved first); a local change or deletion
    the table has not seen is kept for the next push.
    """
    if row is None:  # the file was pulled or pushed before and is gone from the table
        if local is None:
            return "forget"
        return "remove" if local == base else "keep"
    if local == row:
        return "same"
    if local is None:
        return "keep" if base == row else "fetch"
    if local == base:
        return "fetch"
    if base == row:
        return "keep"
    return "conflict"


def stamp_of(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class CacheRecord:
    """The ``Known`` files of one workspace, read and saved under its lock file."""

    def __init__(self, root: Path, table_id: str) -> None:
        self.path = root / STATE_DIR / "state.json"
        self.table_id = table_id
        self.files: dict[str, Known] = {}
        self._saved: dict[str, Known] = {}

    def load(self) -> None:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warning("ignoring the unreadable mirror record %s (%s)", self.path, exc)
            return
        if not isinstance(data, dict) or data.get("table") != self.table_id:
            return  # made for another table: start afresh (no local file is removed)
        for path, entry in dict(data.get("files") or {}).items():
            try:
                sha, size, mtime_ns, inode, ctime_ns = entry
                stamp = (int(size), int(mtime_ns), int(inode), int(ctime_ns))
            except (TypeError, ValueError):
                continue  # a damaged entry: that file counts as never pulled
            self.files[str(path)] = Known(str(sha), stamp)
        self._saved = dict(self.files)

    def save(self) -> None:
        if self.files == self._saved:
            return
        files = {path: [k.sha256, *k.stamp] for path, k in sorted(self.files.items())}
        data = json.dumps({"table": self.table_id, "files": files}, ensure_ascii=False)
        write_file_bytes(self.path, data.encode("utf-8"), time.time_ns())
        self._saved = dict(self.files)


@contextmanager
def workspace_lock(root: Path) -> Iterator[None]:
    """Exclusive lock of one cached workspace among the threads and processes of a home."""
    folder = root / STATE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with lock_file(folder / "lock", create=True):
        yield


def local_sha256(path: str, known: Known | None) -> tuple[str | None, os.stat_result | None]:
    """The sha256 of a local file (None when missing); an unchanged stat skips the read."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    if not stat.S_ISREG(st.st_mode):
        raise InvalidInputError(f"{path!r} is not a regular file; move it out of the way")
    if known is not None and known.stamp == stamp_of(st):
        return known.sha256, st
    with open(path, "rb") as handle:
        return sha256_of(handle.read()), st


@functools.lru_cache(maxsize=1 << 16)
def is_canonical(path: str) -> bool:
    """Whether ``check_path`` accepts ``path`` (cached: every pull checks every row)."""
    return path_error(path) is None


def path_error(path: str) -> InvalidInputError | None:
    """Why ``check_path`` refuses ``path``, or None."""
    try:
        check_path(path)
    except InvalidInputError as exc:
        return exc
    return None


def markdown_files(root: Path) -> dict[str, Path]:
    """The ``.md`` files ``list_markdown`` finds under ``root``, by relative path.

    A plain walk (hidden entries skipped) while no symlink is on the way; the first
    symlink hands over to ``list_markdown``, which checks where links lead.
    """
    found: dict[str, Path] = {}
    folders = [("", str(root))]
    while folders:
        relative, folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return {f.relpath: f.path for f in list_markdown(root)}  # it logs the problem
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                return {f.relpath: f.path for f in list_markdown(root)}
            child = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                folders.append((child, entry.path))
            elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                found[child] = Path(entry.path)
    return found
