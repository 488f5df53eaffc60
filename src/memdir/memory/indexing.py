"""What the index of one home covers and how it is cut, from the settings.

Part of the composition root: the ``Memory`` facade asks which files a sync reads
(``source_files``), which workspaces a search reads (``sources``) and with which options
a sync chunks and a search ranks; the layers below receive these as values.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from contextlib import closing
from pathlib import Path
from typing import TypeVar

from memdir.config import SearchSettings, Settings
from memdir.embeddings.base import Embedder
from memdir.errors import InvalidInputError, MemdirError, StoreError
from memdir.facts import FactBook
from memdir.home import GLOBAL_SOURCE, Home, source_of
from memdir.index import (
    ChunkingOptions,
    Freshness,
    SourceFile,
    SyncOptions,
    SyncReport,
    index_pending,
    rebuild_index,
    sync_files,
    sync_paths,
)
from memdir.memory.composition import extra_index_paths
from memdir.memory.stores import Stores
from memdir.progress import Progress
from memdir.search import SearchOptions
from memdir.search.calibration import Calibration
from memdir.store.database_files import is_corruption
from memdir.store.fact_records import Vector
from memdir.tools import Scope
from memdir.workspace import discover_memory_files, sweep_stale_temp_files
from memdir.workspace.daily import repair_interrupted_appends

log = logging.getLogger(__name__)
T = TypeVar("T")
MAX_LOOKS = 4  # looks at the files a write indexes (see Indexer.index_written)


def sources(home: Home, agent_id: str | None, scope: Scope) -> list[str]:
    """The workspaces (sources) a search of ``scope`` reads."""
    if scope == "global":
        return [GLOBAL_SOURCE]
    if scope == "all":
        return [GLOBAL_SOURCE, *(source_of(a) for a in home.agents())]
    if scope != "agent":
        raise InvalidInputError(f"unknown scope {scope!r}; use agent, global or all")
    return [GLOBAL_SOURCE] if agent_id is None else [source_of(agent_id), GLOBAL_SOURCE]


def source_files(
    home: Home, agent_id: str | None, settings: Settings, all_agents: bool = False
) -> tuple[list[SourceFile], list[str]]:
    """The memory files a sync reads (the session's workspaces, or every agent's) and
    their sources. An append cut by a killed writer is cut off before it is read."""
    roots: list[tuple[str, Path]] = [(GLOBAL_SOURCE, home.global_root)]
    if agent_id is not None and not all_agents:
        roots.append((source_of(agent_id), home.workspace_root(agent_id)))
    if all_agents:
        roots.extend((source_of(a), home.workspace_root(a)) for a in home.agents())
    extra = extra_index_paths(settings)
    for _, root in roots:
        repair_interrupted_appends(root)
    files = [
        SourceFile(source=src, path=rel, abs_path=path)
        for src, root in roots
        for rel, path in discover_memory_files(root, extra)
    ]
    return files, [src for src, _ in roots]


def sync_options(settings: Settings) -> SyncOptions:
    idx = settings.index
    return SyncOptions(
        chunking=ChunkingOptions(chunk_tokens=idx.chunk_tokens, overlap_tokens=idx.overlap_tokens),
        max_file_bytes=idx.max_file_bytes,
        batch_size=settings.embeddings.batch_size,
    )


def search_options(
    cfg: SearchSettings, max_results: int | None, min_score: float | None, include_history: bool
) -> SearchOptions:
    """``search.*`` with the caller's overrides."""
    return SearchOptions(
        max_results=cfg.max_results if max_results is None else max_results,
        min_score=cfg.min_score if min_score is None else min_score,
        fusion=cfg.fusion,
        vector_weight=cfg.vector_weight,
        text_weight=cfg.text_weight,
        recency_half_life_days=cfg.recency_half_life_days,
        mmr_lambda=cfg.mmr_lambda if cfg.mmr else None,
        attribution_demote=cfg.attribution_demote,
        calibration=_configured_calibration(cfg),
        include_history=include_history,
    )


def _configured_calibration(cfg: SearchSettings) -> Calibration | None:
    """``search.calibration_*`` when set; None lets search pick by embedder."""
    if cfg.calibration_cosine_weight is None:
        return None
    return Calibration(
        cosine_weight=cfg.calibration_cosine_weight,
        midpoint=cfg.calibration_midpoint or 0.0,
        slope=cfg.calibration_slope or 1.0,
    )


class Indexer:
    """Syncs, rebuilds and the indexing of files written here, for one ``Memory``; a
    corrupt database is rebuilt from the files (``recovering``)."""

    def __init__(
        self,
        home: Home,
        agent_id: str | None,
        settings: Settings,
        embedder: Embedder | None,
        stores: Stores,
        freshness: Freshness,
    ) -> None:
        self.home = home
        self.agent_id = agent_id
        self.source = source_of(agent_id)
        self.settings = settings
        self.embedder = embedder
        self.stores = stores
        self.freshness = freshness

    def sync(self, progress: Progress | None, all_agents: bool, optimize: bool) -> SyncReport:
        return self.recovering(lambda: self._sync_once(progress, all_agents, optimize))

    def _sync_once(self, progress: Progress | None, all_agents: bool, optimize: bool) -> SyncReport:
        started = time.monotonic()
        files, synced = source_files(self.home, self.agent_id, self.settings, all_agents)
        report = sync_files(
            self.stores.index, self.embedder, files, sources=synced,
            options=sync_options(self.settings), progress=progress, optimize=optimize,
        )  # fmt: skip
        self.stores.facts(self.source).sync()
        for source in synced:  # the other workspaces a search reads: their facts too
            if source == self.source:
                continue
            if all_agents:  # every agent's: one at a time, closed after (open files stay few)
                with closing(self.stores.open_facts(source)) as book:
                    book.sync()
            else:
                self.stores.facts(source).sync()
        self.freshness.synced(synced, started)
        return report

    def refresh(self, scope: Scope) -> SyncReport | None:
        searched = sources(self.home, self.agent_id, scope)
        if self.freshness.stale(searched, self.settings.index.refresh_seconds):
            return self.sync(None, all_agents=scope == "all", optimize=False)
        index_pending(self.freshness, searched, self.index_written)
        return None

    def index_written(
        self, files: list[SourceFile], vectors: Mapping[str, Vector] | None = None
    ) -> None:
        """Index files written through this process, on a connection of their own: while
        it waits for the database's write lock, searches go on reading. ``vectors``: what
        the writer embedded already, by embedding-text hash (``index.sync_paths``)."""
        writer = self.stores.index_beside()
        options = sync_options(self.settings)

        def index() -> None:
            # Another process may index a newer version of a file while this one writes
            # an older one: look again (one stat a file) until a look changes nothing.
            for _ in range(MAX_LOOKS):
                report = sync_paths(writer, self.embedder, files, options=options, vectors=vectors)
                if not (report.added or report.changed or report.deleted):
                    return

        self.recovering(index)
        self._facts_follow(files)

    def _facts_follow(self, files: list[SourceFile]) -> None:
        """Replay the facts of the daily notes just indexed: a search hides retired fact
        lines by the line numbers the facts store holds, which an edit that shifted a
        note's lines has just made stale (the replay finds each fact by its marker)."""
        notes = [f for f in files if f.path.startswith("memory/")]
        for source in sorted({f.source for f in notes}):
            try:
                book = self.stores.facts(source)
                if any(_retired_moved(book, f) for f in notes if f.source == source):
                    book.sync()
            except MemdirError as exc:  # the next full sync replays them
                log.warning("the facts of %s did not follow the notes just indexed: %s",
                            source, exc)  # fmt: skip

    def recovering(self, action: Callable[[], T]) -> T:
        """Run ``action``; if the index database turns out corrupt, rebuild it and retry once.

        The database is derived from the Markdown files, so deleting a corrupt one
        loses no knowledge (only usage statistics). Locks, embedder mismatches and
        other store errors propagate unchanged.
        """
        try:
            return action()
        except StoreError as exc:
            if not is_corruption(exc):
                raise
            log.warning(
                "the index database %s is corrupt (%s); rebuilding it from the Markdown files",
                self.home.index_db, exc.__cause__ or exc,
            )  # fmt: skip
        self.rebuild(None)
        return action()

    def rebuild(self, progress: Progress | None) -> SyncReport:
        try:
            return self._rebuild_once(progress, delete=False)
        except StoreError as exc:
            if not is_corruption(exc):
                raise
            log.warning(
                "index %s is unreadable (%s); deleting and rebuilding", self.home.index_db, exc
            )
        return self._rebuild_once(progress, delete=True)

    def _rebuild_once(self, progress: Progress | None, delete: bool) -> SyncReport:
        for root in (self.home.global_root, self.home.agents_dir):
            sweep_stale_temp_files(root)  # left by writers killed mid-write
        files, synced = source_files(self.home, self.agent_id, self.settings, all_agents=True)
        store = self.stores.reopen_index(delete)
        report = rebuild_index(
            store, self.embedder, files, sources=synced, options=sync_options(self.settings),
            tokenizer=self.settings.index.tokenizer, progress=progress,
        )  # fmt: skip
        self.stores.facts(self.source).rebuild()
        return report


def _retired_moved(book: FactBook, file: SourceFile) -> bool:
    """Whether a retired fact line of ``file`` is no longer where the facts store has it
    (an append moves none: then nothing needs replaying)."""
    marks = book.store.retired_lines([file.source], [file.path])
    if not marks:
        return False
    try:
        lines = file.abs_path.read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return True
    return any(
        not 0 < mark.line <= len(lines) or f"id={mark.fact_id}" not in lines[mark.line - 1]
        for mark in marks
    )
