"""The write side of an index store, as ``index/sync.py`` uses it.

``SqliteStore`` and ``PostgresStore`` both satisfy it. It is larger than the
read protocol (``IndexStore``) because an incremental sync is a conversation:
read the stamps, move renamed files, write changed ones with cached vectors,
delete the gone ones. Splitting it would only scatter one job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memdir.store.base import EmbedderIdentity, IndexStats, IndexStore
from memdir.store.records import FileKey, FileStamp, FileWrite


class IndexWriter(IndexStore, Protocol):
    """Everything sync, rebuild and status need from a store."""

    @property
    def identity(self) -> EmbedderIdentity | None: ...

    @property
    def tokenizer(self) -> str: ...

    def bind_identity(self, identity: EmbedderIdentity) -> None: ...

    def file_stamps(self, sources: Sequence[str]) -> dict[FileKey, FileStamp]: ...

    def write_files(
        self, writes: Sequence[FileWrite], identity: EmbedderIdentity | None = None
    ) -> int: ...

    def move_files(self, moves: Sequence[tuple[FileKey, FileStamp]]) -> list[FileKey]: ...

    def delete_files(self, keys: Sequence[FileKey]) -> None: ...

    def update_stamps(self, stamps: Sequence[FileStamp]) -> None: ...

    def files_missing_vectors(self, sources: Sequence[str]) -> set[FileKey]: ...

    def mark_vectors_complete(self, sources: Sequence[str]) -> None: ...

    def optimize_vectors(self, progress: Callable[[str], None] | None = None) -> list[str]:
        """Bring derived vector structures up to date after a sync; the unit kinds rebuilt."""
        ...

    def cached_vectors(
        self, identity: EmbedderIdentity, hashes: Iterable[str]
    ) -> dict[str, npt.NDArray[np.float32]]: ...

    def clear(self, *, keep_cache: bool = True, tokenizer: str | None = None) -> None: ...

    def stats(self) -> IndexStats: ...

    def close(self) -> None: ...
