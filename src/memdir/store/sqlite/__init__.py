"""The embedded default backend: one SQLite file for the index, one for the facts.

``store.py`` holds connections, transactions and the writer; ``keywords/`` and
``vectors/`` are the engines that answer searches (``changelog.py`` says how they stay
fresh across processes); ``migrations.py`` is every schema change; ``facts.py`` is the
facts store.
"""

from memdir.store.sqlite.facts import SqliteFactStore
from memdir.store.sqlite.store import SqliteStore

__all__ = ["SqliteFactStore", "SqliteStore"]
