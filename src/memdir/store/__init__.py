"""memdir.store layer: the only place SQL lives.

``contracts.py`` holds what crosses the layer (values and the ``IndexReader``,
``IndexWriter`` and ``FactStore`` protocols); ``open.py`` chooses a backend:
``sqlite/`` (the embedded default) or ``postgres/`` (the scale-out).
"""

from memdir.store.contracts import (
    UNIT_KINDS,
    EmbedderIdentity,
    FactStore,
    FileKey,
    FileStamp,
    FileWrite,
    IndexReader,
    IndexStats,
    IndexWriter,
    KeywordQuery,
    ScoredId,
    Unit,
    UnitKind,
)
from memdir.store.sqlite import SqliteFactStore, SqliteStore

__all__ = [
    "UNIT_KINDS",
    "EmbedderIdentity",
    "FactStore",
    "FileKey",
    "FileStamp",
    "FileWrite",
    "IndexReader",
    "IndexStats",
    "IndexWriter",
    "KeywordQuery",
    "ScoredId",
    "SqliteFactStore",
    "SqliteStore",
    "Unit",
    "UnitKind",
]
