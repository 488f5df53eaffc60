"""Open an index store by backend name: the call the composition root makes.

``open_store("sqlite", path=...)`` opens the embedded default;
``open_store("postgres", dsn=...)`` the shared PostgreSQL index. Options that
only one backend understands are ignored by the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memdir.errors import ConfigError
from memdir.store.base import EmbedderIdentity
from memdir.store.postgres.store import PostgresStore, VectorIndexKind
from memdir.store.sqlite import KeywordRanking, SqliteStore, VectorBackend
from memdir.store.vectors.graph import GRAPH_MIN_ROWS

Backend = Literal["sqlite", "postgres"]


@dataclass(frozen=True)
class StoreSettings:
    """Backend-specific options, with the defaults of ``memdir.toml``'s ``[store]`` table."""

    schema: str = "memdir"
    vector_index: VectorIndexKind = "exact"
    pool_size: int = 1
    vector_backend: VectorBackend = "auto"
    keyword_ranking: KeywordRanking = "memory"
    graph_min_rows: int = GRAPH_MIN_ROWS


def open_store(
    backend: str,
    *,
    path: Path | str | None = None,
    dsn: str | None = None,
    tokenizer: str | None = "porter",
    identity: EmbedderIdentity | None = None,
    settings: StoreSettings | None = None,
) -> SqliteStore | PostgresStore:
    """Open (creating and migrating if needed) the index store of ``backend``."""
    opts = settings or StoreSettings()
    if backend == "sqlite":
        if path is None:
            raise ConfigError("the sqlite store needs a database path; set store.path")
        return SqliteStore.open(
            path,
            tokenizer=tokenizer,
            identity=identity,
            vector_backend=opts.vector_backend,
            keyword_ranking=opts.keyword_ranking,
            graph_min_rows=opts.graph_min_rows,
        )
    if backend == "postgres":
        if not dsn:
            raise ConfigError(
                "store.backend = 'postgres' needs a connection string; set store.dsn "
                "(e.g. 'postgresql://user@host/dbname') or MEMDIR_STORE__DSN"
            )
        return PostgresStore.open(
            dsn,
            schema=opts.schema,
            tokenizer=tokenizer,
            identity=identity,
            vector_index=opts.vector_index,
            pool_size=opts.pool_size,
        )
    raise ConfigError(f"unknown store backend {backend!r}; use 'sqlite' or 'postgres'")
