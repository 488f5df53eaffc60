"""``Stores``: the store handles of one ``Memory``, opened when first used, under one lock.

A ``Memory`` reads and writes through these handles:

- the index (``index``): what searches read and full syncs write;
- a second index store (``index_beside``) for the files a write indexes at once, so the
  write, not the searches, waits for the index's write lock;
- the facts of each workspace it saves to or syncs (``facts``), one ``FactBook`` per
  source;
- facts readers (``facts_reader``) on connections of their own, so a search's retired
  lines and a recall never wait for a save's transaction.

``store.open`` is the only place that knows which backend they come from. When the
database files are deleted or replaced under a long-running process (another process
rebuilt the index, someone deleted it), every handle is closed and reopened on next use.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from memdir.config import Settings
from memdir.embeddings.base import Embedder
from memdir.facts import DecideFn, FactBook
from memdir.home import Home, agent_of
from memdir.memory.reads import best_effort
from memdir.store import FactStore, IndexWriter
from memdir.store.database_files import IndexFiles, delete_leftovers
from memdir.store.open import Backend, StoreOptions, open_backend
from memdir.workspace import Workspace

log = logging.getLogger(__name__)


def configured_backend(home: Home, settings: Settings) -> Backend:
    """The backend ``[store]`` names, for the stores of ``home``."""
    cfg = settings.store
    return open_backend(
        StoreOptions(
            backend=cfg.backend, index_dir=home.index_dir, dsn=cfg.dsn,
            schema=cfg.schema_name, vector_index=cfg.vector_index, pool_size=cfg.pool_size,
            graph_min_rows=cfg.vector_graph_min_rows,
        )
    )  # fmt: skip


class Stores:
    """Lazily opened store handles, closed together (``close``) and reopened when their
    files were replaced. ``decide`` is the fact decider every ``FactBook`` gets."""

    def __init__(
        self,
        home: Home,
        settings: Settings,
        embedder: Embedder | None,
        decide: Callable[[], DecideFn | None],
    ) -> None:
        self.home = home
        self.tokenizer = settings.index.tokenizer
        self.embedder = embedder
        self._decide = decide
        self.backend = configured_backend(home, settings)
        self._files = tuple(IndexFiles(path) for path in self.backend.database_files)
        self._index: IndexWriter | None = None
        self._beside: IndexWriter | None = None  # indexes files written here, for search
        self._books: dict[str, FactBook] = {}  # the facts of each workspace, by source
        self._readers: dict[tuple[str, str], FactStore] = {}  # (source, reader) -> store
        self._lock = threading.RLock()

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def close(self) -> None:
        with self._lock:
            handles: list[IndexWriter | FactBook | FactStore | None] = [
                self._index, *self._books.values(), self._beside, *self._readers.values(),
            ]  # fmt: skip
            for handle in handles:
                if handle is not None:
                    handle.close()  # (closing a store twice is harmless)
            self._index = self._beside = None
            self._books.clear()
            self._readers.clear()
            for files in self._files:
                files.forget()

    def _follow_files(self) -> None:
        """Reopen the stores when their files were deleted or replaced under this process
        (``IndexFiles``); a missing database is created and filled by the next sync."""
        if self._index is None and not self._books and self._beside is None:
            return
        if any([files.replaced() for files in self._files]):  # look at both
            log.warning(
                "the index files under %s were deleted or replaced by another process; "
                "reopening them", self.home.index_dir,
            )  # fmt: skip
            missing = [files.database for files in self._files if files.database_missing]
            self.close()
            for database in missing:  # the WAL and shared memory of a deleted file are stale
                delete_leftovers(database)

    @property
    def index(self) -> IndexWriter:
        """The index store: SQLite under ``index/`` or PostgreSQL (``store.backend``)."""
        with self._lock:
            self._follow_files()
            if self._index is None:
                self._index = self.backend.open_index(self.tokenizer)
            return self._index

    def index_beside(self) -> IndexWriter:
        """An index store beside ``index`` for the writes that index their files at once."""
        index = self.index
        with self._lock:
            if self._beside is None:
                self._beside = self.backend.index_beside(index, self.tokenizer)
            return self._beside

    def facts(self, source: str) -> FactBook:
        """The facts of the workspace ``source`` names (kept open until ``close``)."""
        with self._lock:
            self._follow_files()
            book = self._books.get(source)
            if book is None:
                book = self._books[source] = self._open_facts(source)
            return book

    def open_facts(self, source: str) -> FactBook:
        """The facts of ``source`` on a store of their own, for the caller to close."""
        return self._open_facts(source)

    def _open_facts(self, source: str) -> FactBook:
        store = self.backend.open_facts(source)
        workspace = Workspace(self.home.root, agent_of(source))
        book = FactBook(store, self.embedder, workspace, decide=self._decide())
        # the recovery walk: notes changed since the last record (a new or deleted
        # database, a save killed after its append, edits by hand); a read-only home or a
        # full disk reads the facts as they are
        best_effort("replaying changed notes into the facts", book.sync, None)
        return book

    def facts_reader(self, source: str, reader: str = "search") -> FactStore:
        """The facts ``reader`` (``search``: retired lines; ``recall``) reads, on a
        connection of its own: a save holds its store for its whole transaction, and
        neither must wait for it (WAL lets them read the last committed state meanwhile),
        nor for each other."""
        book = self.facts(source)
        with self._lock:
            store = self._readers.get((source, reader))
            if store is None:
                store = self._readers[(source, reader)] = self.backend.facts_beside(book.store)
            return store

    def reopen_index(self, delete: bool) -> IndexWriter:
        """Close every handle (deleting the databases first when ``delete``) and open the
        index afresh for a rebuild."""
        with self._lock:
            self.close()
            if delete:
                self.backend.delete()
            self._index = self.backend.open_index(None)
            return self._index
