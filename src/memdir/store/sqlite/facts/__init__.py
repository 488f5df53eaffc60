"""The SQLite facts store, in the index store's shape: ``store`` (the connection and its
transactions), ``sql`` (the statements), ``vectors`` (the vector engine) and
``accesses`` (access counts written behind)."""

from memdir.store.sqlite.facts.store import SqliteFactStore
from memdir.store.sqlite.facts.vectors import vector_blob

__all__ = ["SqliteFactStore", "vector_blob"]
