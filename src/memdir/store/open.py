"""Choosing a backend: the one place that knows there are two.

``open_backend(options)`` returns a ``Backend`` that opens the index and facts stores
of one home (SQLite files under its ``index/`` folder) or of one PostgreSQL schema,
deletes them for a rebuild, and names the database files a long-running process
must reopen if they are deleted under it. The composition root (``memdir.memory``)
holds one and never asks which it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from memdir.errors import ConfigError
from memdir.home import FACTS_FILE, INDEX_FILE
from memdir.store.contracts import FactStore, IndexWriter
from memdir.store.sqlite import SqliteFactStore, SqliteStore
from memdir.store.sqlite.vectors.graph import GRAPH_MIN_ROWS

BackendName = Literal["sqlite", "postgres"]


@dataclass(frozen=True)
class StoreOptions:
    """Where the stores live and how to open them (from ``memdir.toml``'s ``[store]``).

    ``index_dir`` is the home's ``index/`` folder (SQLite); ``dsn`` and ``schema`` name
    the PostgreSQL database; the rest tune one backend and are ignored by the other.
    """

    backend: BackendName = "sqlite"
    index_dir: Path | None = None
    dsn: str | None = None
    schema: str = "memdir"
    vector_index: Literal["exact", "hnsw"] = "exact"
    pool_size: int = 1
    graph_min_rows: int = GRAPH_MIN_ROWS


class Backend(Protocol):
    """Opens the stores of one backend; the caller closes what it opens."""

    @property
    def database_files(self) -> tuple[Path, ...]:
        """Files that, deleted or replaced under a running process, must be reopened."""
        ...

    def open_index(self, tokenizer: str | None) -> IndexWriter:
        """The index (created and migrated if needed); ``tokenizer`` None accepts any."""
        ...

    def open_facts(self, source: str) -> FactStore:
        """The facts of one scope (``global`` or ``agent:<id>``)."""
        ...

    def index_beside(self, index: IndexWriter, tokenizer: str | None) -> IndexWriter:
        """An index store for work beside ``index`` that must not wait for it (writes
        while searches read): a connection of its own where the backend needs one."""
        ...

    def facts_beside(self, facts: FactStore) -> FactStore:
        """``facts_beside`` for the facts: reads that must not wait for a save."""
        ...

    def delete(self) -> None:
        """Delete the index and the facts (a rebuild from the notes follows)."""
        ...


class SqliteBackend:
    """Two SQLite files under the home's ``index/``: the index and the facts, so neither
    kind of write waits for the other's write lock. A second store is a second
    connection: SQLite serialises the calls of one."""

    def __init__(self, index_dir: Path, graph_min_rows: int = GRAPH_MIN_ROWS) -> None:
        self.index_path = index_dir / INDEX_FILE
        self.facts_path = index_dir / FACTS_FILE
        self.graph_min_rows = graph_min_rows

    @property
    def database_files(self) -> tuple[Path, ...]:
        return (self.index_path, self.facts_path)

    def open_index(self, tokenizer: str | None) -> IndexWriter:
        return SqliteStore.open(
            self.index_path, tokenizer=tokenizer, graph_min_rows=self.graph_min_rows
        )

    def open_facts(self, source: str) -> FactStore:
        return SqliteFactStore.open(self.facts_path, source=source)

    def index_beside(self, index: IndexWriter, tokenizer: str | None) -> IndexWriter:
        return self.open_index(tokenizer)

    def facts_beside(self, facts: FactStore) -> FactStore:
        return self.open_facts(facts.source)

    def delete(self) -> None:
        SqliteStore.delete(self.index_path)
        SqliteStore.delete(self.facts_path)


class PostgresBackend:
    """One PostgreSQL schema for the index and the facts, shared by every host. Readers
    never wait for writers there, so work beside a store shares its connections."""

    def __init__(self, options: StoreOptions) -> None:
        if not options.dsn:
            raise ConfigError(
                "store.backend = 'postgres' needs a connection string; set store.dsn "
                "(e.g. 'postgresql://user@host/dbname') or MEMDIR_STORE__DSN"
            )
        self.dsn = options.dsn
        self.options = options

    @property
    def database_files(self) -> tuple[Path, ...]:
        return ()

    def open_index(self, tokenizer: str | None) -> IndexWriter:
        from memdir.store.postgres import PostgresStore

        opts = self.options
        return PostgresStore.open(
            self.dsn, schema=opts.schema, tokenizer=tokenizer,
            vector_index=opts.vector_index, pool_size=opts.pool_size,
        )  # fmt: skip

    def open_facts(self, source: str) -> FactStore:
        from memdir.store.postgres.facts import PostgresFactStore

        return PostgresFactStore.open(self.dsn, schema=self.options.schema, source=source)

    def index_beside(self, index: IndexWriter, tokenizer: str | None) -> IndexWriter:
        return index

    def facts_beside(self, facts: FactStore) -> FactStore:
        return facts

    def delete(self) -> None:
        from memdir.store.postgres import PostgresStore

        PostgresStore.delete(self.dsn, schema=self.options.schema)


def open_backend(options: StoreOptions) -> Backend:
    """The backend ``options.backend`` names (nothing is opened yet)."""
    if options.backend == "sqlite":
        if options.index_dir is None:
            raise ConfigError("the sqlite store needs the home's index folder")
        return SqliteBackend(options.index_dir, options.graph_min_rows)
    if options.backend == "postgres":
        return PostgresBackend(options)
    raise ConfigError(f"unknown store backend {options.backend!r}; use 'sqlite' or 'postgres'")
