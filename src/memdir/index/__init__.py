"""memdir.index layer: markdown chunking, incremental sync into the store, and the watcher.

It receives files and options as values (``SourceFile``, ``SyncOptions``); it
never reads configuration or walks workspaces itself.
"""

from memdir.index.chunking import (
    ChunkingOptions,
    Span,
    chunk_markdown,
    embedding_text,
    estimate_tokens,
    text_sha256,
)
from memdir.index.sync import (
    SourceFile,
    SyncOptions,
    SyncReport,
    rebuild_index,
    sync_files,
)
from memdir.index.watch import Watcher, watch_paths
from memdir.progress import Progress

__all__ = [
    "ChunkingOptions",
    "Progress",
    "SourceFile",
    "Span",
    "SyncOptions",
    "SyncReport",
    "Watcher",
    "chunk_markdown",
    "embedding_text",
    "estimate_tokens",
    "rebuild_index",
    "sync_files",
    "text_sha256",
    "watch_paths",
]
