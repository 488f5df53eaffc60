"""PostgreSQL + pgvector scale-out backend of the index store.

``PostgresStore`` has the API of ``SqliteStore`` (the ``IndexStore`` protocol plus
the writer methods ``memdir.index`` calls), so sync and search work unchanged.
``open_store`` picks a backend by name, for the composition root.

Importing this package needs nothing beyond memdir; psycopg and pgvector are
imported when a store connects (``pip install 'memdir[postgres]'``).
"""

from memdir.store.postgres.factory import Backend, StoreSettings, open_store
from memdir.store.postgres.store import PostgresStore, VectorIndexKind

__all__ = ["Backend", "PostgresStore", "StoreSettings", "VectorIndexKind", "open_store"]
