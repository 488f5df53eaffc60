"""The database files a long-running process holds: whether they were deleted or replaced
under it, what a deleted one left beside it, and which store errors mean a damaged file.

The composition root (``memdir.memory``) uses them to reopen or rebuild the derived stores.
"""

from __future__ import annotations

from pathlib import Path

from memdir.errors import IndexMismatchError, StoreError
from memdir.store.sqlite.connect import is_corrupt

FileId = tuple[int, int] | None


def file_id(path: Path) -> FileId:
    """(device, inode) of ``path``, or None when it does not exist."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_dev, stat.st_ino)


class IndexFiles:
    """The identities of an index database and its ``-wal`` as this process opened them.

    A long-running process holds them open; if someone deletes ``memdir.db`` or its
    ``-wal`` (or another process rebuilds the index), it would go on using the
    unlinked files while every other process sees new ones. ``replaced()`` tells.
    """

    def __init__(self, database: Path) -> None:
        self.database = database
        self.wal = Path(f"{database}-wal")
        self._seen: tuple[FileId, FileId] | None = None

    def forget(self) -> None:
        """The connections were closed: the next look records the files afresh."""
        self._seen = None

    def replaced(self) -> bool:
        """Whether the files differ from the ones first seen since ``forget()``."""
        now = (file_id(self.database), file_id(self.wal))
        seen = self._seen
        if seen is None or seen == now:
            self._seen = now
            return False
        if all(old is None or old == new for old, new in zip(seen, now, strict=True)):
            self._seen = now  # a file appeared (the WAL with the first read): nothing replaced
            return False
        return True

    @property
    def database_missing(self) -> bool:
        return file_id(self.database) is None


def delete_leftovers(database: Path) -> None:
    """Remove what a deleted SQLite database left beside it (its WAL, shared memory and
    journal), which would otherwise be taken for the state of a new file of that name."""
    for suffix in ("-wal", "-shm", "-journal"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)


def is_corruption(error: StoreError) -> bool:
    """Whether ``error`` says a database file is damaged (not locked, not mismatched):
    its driver error is one ``is_corrupt`` classifies so."""
    if isinstance(error, IndexMismatchError) or error.__cause__ is None:
        return False
    return is_corrupt(error.__cause__)
