"""memdir.index layer: markdown chunking, incremental sync into the store, and the watcher.

It receives files and options as values (``SourceFile``, ``SyncOptions``); it
never reads configuration or walks workspaces itself. The watcher (watchfiles)
is imported on first use: only long-lived processes watch.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from memdir.index.chunking import (
    ChunkingOptions,
    Span,
    chunk_markdown,
    embedding_text,
    text_sha256,
)
from memdir.index.freshness import Freshness, freshness_of, index_pending
from memdir.index.sync import (
    SourceFile,
    SyncOptions,
    SyncReport,
    rebuild_index,
    sync_files,
    sync_paths,
)
from memdir.progress import Progress

if TYPE_CHECKING:
    from memdir.index.watch import Watcher, watch_paths

__all__ = [
    "ChunkingOptions",
    "Freshness",
    "Progress",
    "SourceFile",
    "Span",
    "SyncOptions",
    "SyncReport",
    "Watcher",
    "chunk_markdown",
    "embedding_text",
    "freshness_of",
    "index_pending",
    "rebuild_index",
    "sync_files",
    "sync_paths",
    "text_sha256",
    "watch_paths",
]


def __getattr__(name: str) -> Any:
    if name not in ("Watcher", "watch_paths"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module("memdir.index.watch"), name)
