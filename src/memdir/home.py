"""The home folder on disk: what makes a folder a memdir home, whether the index files
under it were replaced, and which store errors mean a damaged index.

Leaves the composition root (``memory.py``) uses; no configuration, no layers.
"""

from __future__ import annotations

from pathlib import Path

from memdir.errors import IndexMismatchError, StoreError

FileId = tuple[int, int] | None


def is_home(home: Path) -> bool:
    """A memdir home holds a workspace (global or an agent's), a configuration or an index."""
    return (
        (home / "workspace").is_dir()
        or (home / "agents").is_dir()
        or (home / "memdir.toml").is_file()
        or (home / "index" / "memdir.db").is_file()
    )


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
    """Whether ``error`` says the database file is damaged (not locked, not mismatched).

    SQLite reports a damaged or foreign file as a plain ``DatabaseError`` ("file is
    not a database", "database disk image is malformed"), and a WAL left by a
    database deleted under a running process as "disk I/O error" (a full disk is
    ``DiskFullError`` already); locks and busy timeouts never count.
    """
    if isinstance(error, IndexMismatchError):
        return False
    cause = error.__cause__
    if cause is None:
        return False
    text = str(cause).lower()
    if "locked" in text or "busy" in text:
        return False
    return type(cause).__name__ == "DatabaseError" or "disk i/o error" in text
