"""memdir.store layer: the only place SQL lives.

``base.py`` holds the contract (``IndexStore`` and the values crossing it);
``SqliteStore`` is the embedded default (FTS5 + sqlite-vec, numpy fallback).
"""

from memdir.store.base import (
    EmbedderIdentity,
    FileRecord,
    IndexStats,
    IndexStore,
    ScoredId,
    Unit,
    UnitKind,
)
from memdir.store.records import FileKey, FileStamp, FileWrite
from memdir.store.sqlite import KeywordRanking, SqliteStore, VectorBackend

__all__ = [
    "EmbedderIdentity",
    "FileKey",
    "FileRecord",
    "FileStamp",
    "FileWrite",
    "IndexStats",
    "IndexStore",
    "KeywordRanking",
    "ScoredId",
    "SqliteStore",
    "Unit",
    "UnitKind",
    "VectorBackend",
]
