"""Compose store + sync + search for the benchmarks, until the ``Memory`` facade exists.

``build_index`` indexes every ``.md`` file of a workspace into a fresh SQLite
index (or the store it is given); ``memdir_retriever`` turns that into the search
function the LoCoMo harness reads, on SQLite or on a PostgreSQL schema
(``postgres_index``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path

from memdir.config import SearchSettings
from memdir.embeddings.base import Embedder
from memdir.errors import DependencyError, StoreError
from memdir.index import SourceFile, SyncOptions, SyncReport, sync_files
from memdir.search import SearchOptions, search
from memdir.store import IndexWriter, SqliteStore
from memdir.store.sqlite.vectors.graph import GRAPH_MIN_ROWS

SOURCE = "global"
Span = tuple[str, int, int]


def workspace_root(home_or_dir: Path) -> Path:
    """``home/workspace`` when it exists, else the directory itself."""
    nested = home_or_dir / "workspace"
    return nested if nested.is_dir() else home_or_dir


def list_sources(root: Path) -> list[SourceFile]:
    """Every markdown file under ``root`` as a ``global`` source file."""
    return [
        SourceFile(SOURCE, path.relative_to(root).as_posix(), path)
        for path in sorted(root.rglob("*.md"))
        if path.is_file()
    ]


def build_index(
    home_or_dir: Path,
    embedder: Embedder | None,
    *,
    db_path: Path | None = None,
    options: SyncOptions | None = None,
    optimize: bool = True,
    graph_min_rows: int = GRAPH_MIN_ROWS,
    store: IndexWriter | None = None,
) -> tuple[IndexWriter, SyncReport]:
    """Open (or create) the index of a workspace and sync it; the caller closes the store.

    ``optimize=False`` leaves the vector graphs of a large index for the caller to build
    (``store.optimize()``), so it can time them on their own. With ``store``, that
    (empty) index is filled instead of a SQLite file.
    """
    root = workspace_root(home_or_dir)
    path = db_path or home_or_dir / "index" / "memdir.sqlite"
    if store is None:
        store = SqliteStore.open(path, graph_min_rows=graph_min_rows)
    report = sync_files(
        store, embedder, list_sources(root), sources=[SOURCE], options=options, optimize=optimize
    )
    return store, report


def memdir_retriever(
    embedder: Embedder | None = None,
    options: SearchOptions | None = None,
    *,
    embedder_name: str = "local",
    open_store: Callable[[], IndexWriter] | None = None,
) -> Callable[[Path, int], Callable[[str], list[Span]]]:
    """A LoCoMo retriever factory: index the notes of ``home``, search with ``max_results=k``.

    Without an explicit ``embedder`` the registry's ``embedder_name`` is created once
    (``"none"`` gives keyword-only search). ``open_store`` gives an empty index for each
    conversation (default: a SQLite file in ``home``).
    """
    chosen: list[Embedder | None] = [embedder] if embedder is not None else []

    def factory(home: Path, k: int) -> Callable[[str], list[Span]]:
        if not chosen:
            from memdir.embeddings import create_embedder

            chosen.append(create_embedder(embedder_name))
        model = chosen[0]
        store, _ = build_index(home, model, store=open_store() if open_store else None)
        # the defaults a user gets (Memory.search), as the reference protocol searches
        wanted = replace(
            options or SearchOptions(min_score=SearchSettings().min_score), max_results=k
        )

        def search_fn(question: str) -> list[Span]:
            results = search(store, model, question, sources=[SOURCE], options=wanted)
            return [(hit.path, hit.start_line, hit.end_line) for hit in results]

        return search_fn

    return factory


@contextmanager
def postgres_index(dsn: str) -> Iterator[Callable[[], IndexWriter]]:
    """``open_store`` for ``memdir_retriever`` on PostgreSQL: one fresh schema
    ``memdir_bench_<random>``, emptied for each conversation and dropped at the end."""
    from memdir.store.postgres import PostgresStore

    schema = f"memdir_bench_{uuid.uuid4().hex[:8]}"
    opened: list[PostgresStore] = []

    def open_store() -> IndexWriter:
        for store in opened:
            store.close()
        opened[:] = [PostgresStore.open(dsn, schema=schema)]
        opened[0].clear(keep_cache=False)
        return opened[0]

    try:
        yield open_store
    finally:
        for store in opened:
            store.close()
        with suppress(StoreError, DependencyError):  # nothing to drop when it never opened
            PostgresStore.delete(dsn, schema)
