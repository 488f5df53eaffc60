"""Values the index writer (``memdir.index``) passes to the concrete store.

``search/`` never sees these: it reads through ``IndexStore`` in ``base.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memdir.store.base import FileRecord, Unit

FileKey = tuple[str, str]  # (source, path)


@dataclass(frozen=True)
class FileStamp:
    """What the index knows about one file: content hash and the stat it was read with."""

    source: str
    path: str
    sha256: str
    size: int
    mtime_ns: int

    @property
    def key(self) -> FileKey:
        return (self.source, self.path)

    @property
    def mtime(self) -> float:
        return self.mtime_ns / 1e9

    def record(self) -> FileRecord:
        return FileRecord(
            source=self.source,
            path=self.path,
            sha256=self.sha256,
            size=self.size,
            mtime=self.mtime,
        )


@dataclass(frozen=True)
class FileWrite:
    """A file's new content: its stamp, units, and one vector per unit (or None)."""

    stamp: FileStamp
    units: Sequence[Unit]
    vectors: npt.NDArray[np.float32] | None = None
