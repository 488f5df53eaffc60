"""PostgreSQL + pgvector scale-out backend: the index and the facts in one schema.

``PostgresStore`` is an ``IndexWriter`` and ``PostgresFactStore`` a ``FactStore``, so
sync, search and facts work unchanged; ``memdir.store.open`` chooses this backend.
``files.py`` copies workspace files to and from a table (``memdir import``/``export``).

Importing this package needs nothing beyond memdir; psycopg and pgvector are
imported when a store connects (``pip install 'memdir[postgres]'``).
"""

from memdir.store.postgres.store import PostgresStore, VectorIndexKind

__all__ = ["PostgresStore", "VectorIndexKind"]
