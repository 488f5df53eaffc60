"""The ``Memory`` facade: the one object every interface calls.

This is the composition root. It reads configuration, builds the workspace,
the store, the embedder and the chat model, and wires the layers together.
Nothing below it reads configuration; everything below receives values.
Test doubles (``HashEmbedder``, a scripted chat model) are passed in here.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from memdir import composition, prompt_assembly
from memdir.activity import RecentActivity, collect_activity
from memdir.config import LoadedSettings, SearchSettings, Settings, load_settings
from memdir.embeddings.base import Embedder
from memdir.errors import (
    InvalidInputError,
    InvalidPathError,
    MemdirError,
    NextStep,
    NotFoundError,
    StoreError,
)
from memdir.facts import Fact, FactBook, RecalledFact, SaveOutcome
from memdir.facts.book import FACTS_DB
from memdir.facts.safety import reject_new_secrets, reject_secrets
from memdir.home import IndexFiles, delete_leftovers, is_corruption, is_home
from memdir.index import (
    ChunkingOptions,
    SourceFile,
    SyncOptions,
    SyncReport,
    freshness_of,
    index_pending,
    rebuild_index,
    sync_files,
    sync_paths,
)
from memdir.progress import Progress
from memdir.prompt import (
    ContextReport,
    PromptInputs,
    build_context_report,
    build_system_prompt,
)
from memdir.search import SearchOptions, SearchResults, search
from memdir.search.calibration import Calibration
from memdir.search.lifecycle import Retired, index_retired
from memdir.store import FactStore, IndexStats, IndexWriter
from memdir.store.open import StoreOptions, open_backend
from memdir.tools import TOOLS
from memdir.workspace import (
    FileInfo,
    FileSlice,
    NoteLocation,
    PromptFile,
    Workspace,
    discover_memory_files,
    is_memory_path,
    sweep_stale_temp_files,
    validate_agent_id,
    validate_relative_path,
)
from memdir.workspace.daily import repair_interrupted_appends
from memdir.workspace.scoped import agent_of, cite_path, parse_scoped_path, scope_of

if TYPE_CHECKING:  # curation, sessions and models load when used: a search never needs them
    from memdir.context import Session, SessionInfo
    from memdir.curate import ConsolidationResult, ExtractionResult, SessionNote
    from memdir.llm import ChatModel, Message

log = logging.getLogger(__name__)

Scope = Literal["agent", "global", "all"]
ProgressCallback = Progress  # called with a ProgressUpdate per file read, per batch embedded
T = TypeVar("T")
_UNSET: Any = object()
MAX_RECENT_DAYS = 3650

TOOL_NAMES = tuple(tool.name for tool in TOOLS)  # the prompt names the tools tools.py defines
BASE_PROMPT = prompt_assembly.BASE_PROMPT


source_of = scope_of
"""The index source key of a workspace: ``global`` or ``agent:<id>``."""


class Memory:
    """Persistent memory of one agent (or of the global workspace when ``agent_id`` is None).

    Open it with :meth:`open`; use it as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        loaded: LoadedSettings,
        agent_id: str | None,
        embedder: Embedder | None,
        chat_model: ChatModel | None = None,
    ) -> None:
        self.settings: Settings = loaded.settings
        self.loaded = loaded
        self.home = loaded.home
        self.workspace = Workspace(self.home, agent_id)
        self.agent_id = self.workspace.agent_id
        self.embedder = embedder
        self.chat_model = chat_model
        self._store: IndexWriter | None = None
        self._facts: FactBook | None = None
        self._other_facts: dict[str, FactBook] = {}  # other workspaces' facts, for their sync
        cfg = self.settings.store
        self._backend = open_backend(
            StoreOptions(
                backend=cfg.backend, index_dir=self.index_path.parent, dsn=cfg.dsn,
                schema=cfg.schema_name, vector_index=cfg.vector_index, pool_size=cfg.pool_size,
                graph_min_rows=cfg.vector_graph_min_rows,
            )
        )  # fmt: skip
        self._index_files = tuple(IndexFiles(path) for path in self._backend.database_files)
        self._refresh_store: IndexWriter | None = None  # indexes files written here, for search
        self._readers: dict[str, FactStore] = {}  # facts read beside the saves, by reader
        self.freshness = freshness_of(self.home)  # shared by this process's Memory objects
        self._lock = threading.RLock()

    # -- opening and closing -------------------------------------------------------
    @classmethod
    def open(
        cls,
        home: str | os.PathLike[str] | None = None,
        agent_id: str | None = None,
        *,
        overrides: Mapping[str, Mapping[str, object]] | None = None,
        settings: LoadedSettings | None = None,
        embedder: Embedder | None = _UNSET,
        chat_model: ChatModel | None = _UNSET,
    ) -> Memory:
        """Open the memory under ``home`` (default ``$MEMDIR_HOME`` or ``~/.memdir``).

        ``embedder`` replaces the configured embedding provider (pass ``None`` for
        keyword-only search, or a ``HashEmbedder`` in tests); ``chat_model``
        replaces the configured LLM (``None`` for heuristics, a ``ScriptedChatModel``
        in tests). Opening writes nothing; :meth:`init` seeds the workspace.
        """
        loaded = settings or load_settings(home, overrides)
        if embedder is _UNSET:
            embedder = composition.configured_embedder(loaded.settings)
        if chat_model is _UNSET:
            chat_model = composition.configured_chat_model(loaded.settings)
        return cls(loaded, agent_id, embedder, chat_model)

    def close(self) -> None:
        self._close_index()

    def _close_index(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
            if self._facts is not None:
                self._facts.close()
                self._facts = None
            for book in self._other_facts.values():
                book.close()
            self._other_facts.clear()
            if self._refresh_store is not None:
                self._refresh_store.close()  # (closing a store twice is harmless)
                self._refresh_store = None
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()
            for files in self._index_files:
                files.forget()

    def _follow_index_files(self) -> None:
        """Reopen the index when its files were deleted or replaced under this process
        (``home.IndexFiles``); a missing database is created and filled by the next sync."""
        if self._store is None and self._facts is None and self._refresh_store is None:
            return
        if any([files.replaced() for files in self._index_files]):  # look at both
            log.warning(
                "the index files under %s were deleted or replaced by another process; "
                "reopening them", self.index_path.parent,
            )  # fmt: skip
            missing = [files.database for files in self._index_files if files.database_missing]
            self._close_index()
            for database in missing:  # the WAL and shared memory of a deleted file are stale
                delete_leftovers(database)

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def index_path(self) -> Path:
        return self.home / "index" / "memdir.db"

    @property
    def facts_path(self) -> Path:
        """The SQLite facts database: apart from the index, so a save never queues behind
        the re-indexing of a large note, nor an index write behind saves."""
        return self.home / FACTS_DB

    @property
    def store(self) -> IndexWriter:
        """The index store: SQLite under ``index/`` or PostgreSQL (``store.backend``)."""
        with self._lock:
            self._follow_index_files()
            if self._store is None:
                self._store = self._backend.open_index(self.settings.index.tokenizer)
            return self._store

    @property
    def facts(self) -> FactBook:
        """The structured facts of this workspace (derived from marked daily-note lines)."""
        with self._lock:
            self._follow_index_files()
            if self._facts is None:
                self._facts = self._open_facts(source_of(self.agent_id))
            return self._facts

    def _facts_reader(self, reader: str = "search") -> FactStore:
        """The facts ``reader`` (``search``: retired lines; ``recall``) reads, on a SQLite
        connection of its own: a save holds its store for its whole transaction, and
        neither must wait for it (WAL lets them read the last committed state meanwhile),
        nor for each other."""
        book = self.facts
        with self._lock:
            store = self._readers.get(reader)
            if store is None:
                store = self._readers[reader] = self._backend.facts_beside(book.store)
            return store

    def _facts_of(self, scope: str) -> FactBook:
        """The facts of another workspace this session reads (kept open until close)."""
        with self._lock:
            book = self._other_facts.get(scope)
            if book is None:
                book = self._other_facts[scope] = self._open_facts(scope)
            return book

    def _open_facts(self, scope: str) -> FactBook:
        """A ``FactBook`` over the facts of one workspace (the caller closes it)."""
        store = self._backend.open_facts(scope)
        decide = composition.model_decider(self.chat_model)
        workspace = Workspace(self.home, agent_of(scope))
        book = FactBook(store, self.embedder, workspace, decide=decide)
        if not store.file_stamps() and not store.event_paths():
            book.sync()  # a new (or deleted) facts database: fill it from the notes
        return book

    def _require_home(self, write: bool = False) -> None:
        """A write may create the home (its files create their folders); a read of a
        folder that is no memdir home is refused: it would create ``index/`` there and
        answer from nothing (a mistyped ``--home`` or ``MEMDIR_HOME``)."""
        if write or is_home(self.home):
            return
        raise NotFoundError(
            f"{str(self.home)!r} is not a memdir home (it has no workspace/ folder); create "
            "one with `memdir init`, or point --home or MEMDIR_HOME at an existing home"
        )

    # -- workspace -----------------------------------------------------------------
    def init(self, name: str | None = None, description: str | None = None) -> list[str]:
        """Seed the workspace (only missing files); returns the paths created."""
        return self.workspace.seed(name=name, description=description or "")

    def _locate(self, path: str) -> tuple[Workspace, str]:
        """The workspace that holds the file a read of ``path`` means, and its path there.

        ``global:`` and ``agent:<id>:`` prefixes name a workspace (search cites hits from
        outside the session's own that way, ``memdir.workspace.scoped``); a plain path is
        the session's own file, else, in an agent session, the global file of that name.
        Another agent's workspace is readable only where ``search.cross_agent`` allows
        searching it.
        """
        scoped = parse_scoped_path(path)
        if scoped.scope is None:
            if self.agent_id is not None and not self.workspace.has_file(scoped.path):
                shared = Workspace(self.home)
                if shared.has_file(scoped.path):
                    return shared, scoped.path
            return self.workspace, scoped.path
        agent = agent_of(scoped.scope)
        if agent not in (None, self.agent_id) and not self.settings.search.cross_agent:
            raise InvalidInputError(
                f"{path!r} is in agent {agent!r}'s workspace, which this session may not read; "
                "set search.cross_agent = true to allow it"
            )
        return Workspace(self.home, agent), scoped.path

    def _cited(self, workspace: Workspace, path: str) -> str:
        """``path`` of ``workspace`` as this session cites it (plain for its own files)."""
        return cite_path(scope_of(workspace.agent_id), path, scope_of(self.agent_id))

    def _own(self, path: str) -> str:
        """The path of a write: writes go to this session's own workspace only."""
        scoped = parse_scoped_path(path)
        if scoped.scope not in (None, scope_of(self.agent_id)):
            raise InvalidPathError(
                f"{path!r} is in another workspace; a session writes only its own, "
                f"so write {scoped.path!r} (without the prefix) to keep a copy here"
            )
        return scoped.path

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> FileSlice:
        """A range of a file; ``.text`` carries line numbers (``memory_get``). ``path`` may
        be a citation's path (``global:...``, ``agent:<id>:...``; see :meth:`_locate`)."""
        self._require_home()
        workspace, relative = self._locate(path)
        part = workspace.get(relative, from_line=from_line, lines=lines)
        return replace(part, path=self._cited(workspace, part.path))

    def list_files(self, prefix: str = "") -> list[str]:
        self._require_home()
        return self.workspace.list_files(prefix)

    def file_info(self, path: str) -> FileInfo:
        """Size in bytes and last change (UTC) of a file as ``read_file`` finds it."""
        self._require_home()
        workspace, relative = self._locate(path)
        info = workspace.file_info(relative)
        return replace(info, path=self._cited(workspace, info.path))

    def read_file(self, path: str) -> str:
        """A whole file; ``path`` as for :meth:`get`."""
        self._require_home()
        workspace, relative = self._locate(path)
        return workspace.read_file(relative)

    def write_file(self, path: str, content: str) -> str:
        """Create or replace a file atomically; content that adds a credential is refused.

        Writing the last file the first-run ritual asks for ends it (BOOTSTRAP.md goes).
        """
        path = self._own(path)
        written = self.workspace.write_file(path, content, check=_no_new_secrets)
        self._written(written)
        self.workspace.finish_ritual_if_done()
        return written

    def edit_file(self, path: str, old_text: str, new_text: str, replace_all: bool = False) -> int:
        """Exact find-and-replace; an edit whose result holds a new credential is refused
        (even when the credential is assembled from the old text and the new)."""
        path = self._own(path)
        count = self.workspace.edit_file(
            path, old_text, new_text, replace_all=replace_all, check=_no_new_secrets
        )
        self._written(path)
        self.workspace.finish_ritual_if_done()
        return count

    def _written(self, path: str) -> None:
        """A file of this workspace changed: index it now, so searches find it without
        waiting; if that fails (a locked or damaged index), the next search indexes it."""
        relative = str(validate_relative_path(path))
        if not is_memory_path(relative, self.settings.index.extra_paths):
            return
        source = SourceFile(source_of(self.agent_id), relative, self.workspace.root / relative)
        self.freshness.written(source)
        try:
            index_pending(self.freshness, [source.source], self._index_written)
        except MemdirError as exc:  # the file is written; its indexing waits for a search
            log.warning("could not index %s after writing it: %s", relative, exc)

    def append_daily(self, text: str, date: datetime | None = None) -> NoteLocation:
        """Append to today's (or ``date``'s) daily note under a lock; returns where it landed.

        Text holding a credential is refused.
        """
        if isinstance(text, str):
            reject_secrets(text, "the note")
        return self.workspace.append_daily(text, date=date.date() if date else None)

    def delete_file(self, path: str) -> None:
        """Delete a file of this workspace (never a global file read by fallback)."""
        own = self._own(path)
        self.workspace.delete_file(own)
        self._written(own)

    # -- prompt --------------------------------------------------------------------
    def _prompt_inputs(
        self, now: datetime | None = None, session_kind: str | None = None
    ) -> PromptInputs:
        now = now or datetime.now(prompt_assembly.prompt_timezone(self.settings.prompt.timezone))
        facts = self._recovering(lambda: prompt_assembly.fact_lines(self))
        return prompt_assembly.assemble_prompt_inputs(self, now, session_kind, TOOL_NAMES, facts)

    def system_prompt(self, now: datetime | None = None, *, session_kind: str | None = None) -> str:
        """The system prompt assembled from the workspace (DESIGN.md "System prompt").

        ``session_kind`` is ``private`` (default: ``prompt.session_kind``), ``group`` or
        ``shared``; the latter two leave MEMORY.md, the facts and the parts of files
        marked private out (docs/prompt.md).
        """
        self._require_home()
        return build_system_prompt(self._prompt_inputs(now, session_kind))

    def context_report(
        self, now: datetime | None = None, *, session_kind: str | None = None
    ) -> ContextReport:
        """Per-file status, raw and injected size of what the system prompt carries."""
        self._require_home()
        return build_context_report(self._prompt_inputs(now, session_kind))

    def prompt_files(self) -> list[PromptFile]:
        """The files the prompt may carry, in order, with their ``prompt.toml`` settings."""
        return self.workspace.prompt_files()

    def set_prompt_file(
        self, path: str, *, enabled: bool | None = None, sort_order: int | None = None
    ) -> PromptFile:
        """Switch a workspace file into or out of the prompt and/or move it (``prompt.toml``)."""
        return self.workspace.set_prompt_file(path, enabled=enabled, sort_order=sort_order)

    @property
    def ritual_active(self) -> bool:
        """Whether this workspace's first-run ritual (its own BOOTSTRAP.md) is under way."""
        return self.workspace.ritual_active

    def finish_ritual(self) -> bool:
        """End the first-run ritual: delete this workspace's BOOTSTRAP.md (False: none)."""
        return self.workspace.finish_ritual()

    # -- index and search ----------------------------------------------------------
    def _source_files(self, all_agents: bool = False) -> tuple[list[SourceFile], list[str]]:
        roots: list[tuple[str, Path]] = [("global", self.workspace.global_root)]
        if self.agent_id is not None and not all_agents:
            roots.append((source_of(self.agent_id), self.workspace.root))
        if all_agents:
            roots.extend((source_of(a), Workspace(self.home, a).root) for a in self.agents())
        extra = composition.extra_index_paths(self.settings)
        for _, root in roots:  # an append cut by a killed writer is cut off before it is read
            repair_interrupted_appends(root)
        files = [
            SourceFile(source=src, path=rel, abs_path=path)
            for src, root in roots
            for rel, path in discover_memory_files(root, extra)
        ]
        return files, [src for src, _ in roots]

    def agents(self) -> list[str]:
        """Ids of the agent workspaces under this home."""
        agents_dir = self.home / "agents"
        if not agents_dir.is_dir():
            return []
        return sorted(p.name for p in agents_dir.iterdir() if p.is_dir() and _valid_agent(p.name))

    def sync(
        self,
        progress: ProgressCallback | None = None,
        all_agents: bool = False,
        optimize: bool = True,
    ) -> SyncReport:
        """Bring the index up to date with the files (incremental by content hash).

        A corrupt index database is rebuilt from the files, with a logged warning.
        ``optimize=False`` skips building vector graphs (minutes on a large index; the
        syncs that run before a search or a tool call skip it).
        """
        self._require_home()
        return self._recovering(lambda: self._sync_once(progress, all_agents, optimize))

    def _sync_once(
        self, progress: ProgressCallback | None, all_agents: bool, optimize: bool
    ) -> SyncReport:
        started = time.monotonic()
        files, sources = self._source_files(all_agents)
        report = sync_files(
            self.store, self.embedder, files, sources=sources,
            options=self._sync_options(), progress=progress, optimize=optimize,
        )  # fmt: skip
        self.facts.sync()
        for source in sources:  # the other workspaces a search reads: their facts too
            if source == source_of(self.agent_id):
                continue
            if all_agents:  # every agent's: one at a time, closed after (open files stay few)
                with closing(self._open_facts(source)) as book:
                    book.sync()
            else:
                self._facts_of(source).sync()
        self.freshness.synced(sources, started)
        return report

    def refresh(self, scope: Scope = "agent") -> SyncReport | None:
        """Bring the index as far up to date as a search needs (``index/freshness.py``).

        Files this process wrote through memdir and could not index at once are
        indexed (only they); a full incremental sync runs when the searched
        workspaces were never synced here or, without a watcher, their last sync began
        more than ``index.refresh_seconds`` ago. A search under write load thus never
        waits for a sync of other writers' work; ``sync()`` is the full one.
        """
        self._require_home()
        sources = self._sources(scope)
        if self.freshness.stale(sources, self.settings.index.refresh_seconds):
            return self.sync(optimize=False, all_agents=scope == "all")
        index_pending(self.freshness, sources, self._index_written)
        return None

    def _index_written(self, files: list[SourceFile]) -> None:
        """Index files written through this process, on a connection of their own: while
        it waits for the database's write lock, searches go on reading."""
        with self._lock:
            self._follow_index_files()
            if self._refresh_store is None:
                tokenizer = self.settings.index.tokenizer
                self._refresh_store = self._backend.index_beside(self.store, tokenizer)
            writer = self._refresh_store
        options = self._sync_options()
        self._recovering(lambda: sync_paths(writer, self.embedder, files, options=options))

    def _recovering(self, action: Callable[[], T]) -> T:
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
                self.index_path, exc.__cause__ or exc,
            )  # fmt: skip
        self.rebuild()
        return action()

    def rebuild(self, progress: ProgressCallback | None = None) -> SyncReport:
        """Rebuild the derived index from the files (keeps the embedding cache).

        A database that cannot be opened (corrupt, truncated, not SQLite) is deleted
        and built anew; the Markdown files are the truth, so nothing is lost.
        """
        try:
            return self._rebuild_once(progress, delete=False)
        except StoreError as exc:
            if not is_corruption(exc):
                raise
            log.warning(
                "index %s is unreadable (%s); deleting and rebuilding", self.index_path, exc
            )
        return self._rebuild_once(progress, delete=True)

    def _rebuild_once(self, progress: ProgressCallback | None, delete: bool) -> SyncReport:
        for root in (self.workspace.global_root, self.home / "agents"):
            sweep_stale_temp_files(root)  # left by writers killed mid-write
        files, sources = self._source_files(all_agents=True)
        with self._lock:
            self._close_index()
            if delete:
                self._backend.delete()
            store = self._backend.open_index(None)
            self._store = store
        report = rebuild_index(
            store, self.embedder, files, sources=sources, options=self._sync_options(),
            tokenizer=self.settings.index.tokenizer, progress=progress,
        )  # fmt: skip
        self.facts.rebuild()
        return report

    def index_status(self) -> IndexStats:
        self._require_home(write=False)
        return self.store.stats()

    def _sync_options(self) -> SyncOptions:
        idx = self.settings.index
        return SyncOptions(
            chunking=ChunkingOptions(
                chunk_tokens=idx.chunk_tokens, overlap_tokens=idx.overlap_tokens
            ),
            max_file_bytes=idx.max_file_bytes,
            batch_size=self.settings.embeddings.batch_size,
        )

    def _sources(self, scope: Scope) -> list[str]:
        if scope == "global":
            return ["global"]
        if scope == "all":
            return ["global", *(source_of(a) for a in self.agents())]
        if scope != "agent":
            raise InvalidInputError(f"unknown scope {scope!r}; use agent, global or all")
        return ["global"] if self.agent_id is None else [source_of(self.agent_id), "global"]

    def search(
        self,
        query: str,
        max_results: int | None = None,
        min_score: float | None = None,
        scope: Scope = "agent",
        include_history: bool = False,
    ) -> SearchResults:
        """Hybrid search over the memory files of this agent (and the global workspace).

        Lines of facts that are superseded or forgotten (and the records of forgets) are
        left out; ``include_history`` returns them after the current hits, marked
        (``SearchHit.retired``).
        """
        self._require_home(write=False)
        cfg = self.settings.search
        if scope == "all" and not cfg.cross_agent and self.agent_id is not None:
            raise InvalidInputError(
                "searching all agents is disabled; set search.cross_agent = true to allow it"
            )
        options = SearchOptions(
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
        sources = self._sources(scope)

        def retired_of(files: set[tuple[str, str]]) -> Retired:
            paths = sorted({path for source, path in files if source in sources})
            return index_retired(self._facts_reader().retired_lines(sources, paths))

        def run() -> SearchResults:
            return search(
                self.store, self.embedder, query, sources=sources, options=options,
                retired_of=retired_of,
            )  # fmt: skip

        results = self._recovering(run)
        home = source_of(self.agent_id)  # hits of other workspaces are cited with a prefix
        cited = tuple(replace(h, cited_path=cite_path(h.source, h.path, home)) for h in results)
        return replace(results, hits=cited)

    # -- facts -------------------------------------------------------------------
    def save(
        self, content: str, category: str | None = None, importance: int | None = None
    ) -> SaveOutcome:
        """Save a fact to today's daily note and the facts store (``memory_save``).

        A near-duplicate reinforces the existing fact; an update supersedes the old one.
        """
        return self.facts.save(content, category=category, importance=importance)

    def recall(
        self,
        query: str,
        category: str | None = None,
        as_of: datetime | None = None,
        limit: int = 5,
    ) -> list[RecalledFact]:
        """Facts valid now (or ``as_of``) that answer ``query`` (``memory_recall``)."""
        self._require_home(write=False)
        return self._recovering(
            lambda: self._recall_book().recall(query, category=category, as_of=as_of, limit=limit)
        )

    def _recall_book(self) -> FactBook:
        """The facts a recall reads, on a connection of its own (``_facts_reader``): a
        recall never queues behind saves."""
        book = self.facts
        return FactBook(
            self._facts_reader("recall"), book.embedder, book.workspace, clock=book.clock
        )

    def forget(
        self, fact_id: str | None = None, query: str | None = None, reason: str = ""
    ) -> Fact:
        """Hide a fact from recall and record why in the daily note (``memory_forget``)."""
        if not reason.strip():
            raise InvalidInputError("forgetting a fact needs a reason; it is kept for audit")
        return self.facts.forget(fact_id, query, reason=reason)

    def list_facts(
        self,
        category: str | None = None,
        as_of: datetime | None = None,
        include_superseded: bool = False,
        include_forgotten: bool = False,
    ) -> list[Fact]:
        self._require_home(write=False)
        return self.facts.list_facts(category, as_of, include_superseded, include_forgotten)

    def recent(self, days: float = 7.0, limit: int = 20) -> RecentActivity:
        """What changed in the last ``days`` days, newest first (``memory_recent``): files
        written (with the global files this workspace reads) and facts saved, superseded
        or forgotten; at most ``limit`` of each."""
        self._require_home()
        if not 0 < days <= MAX_RECENT_DAYS or limit < 1:
            raise InvalidInputError(
                f"recent activity covers 1 to {MAX_RECENT_DAYS} days and at least one entry; "
                f"got {days!r} days and {limit!r} entries"
            )
        since = datetime.now(UTC) - timedelta(days=days)
        facts = self._recovering(
            lambda: self.list_facts(include_superseded=True, include_forgotten=True)
        )
        return collect_activity(
            self.workspace.modified_files(since.timestamp()), facts, since, limit
        )

    def _save_fact(self, text: str, category: str | None, importance: int | None) -> object:
        return self.save(text, category=category, importance=importance)

    # -- sessions and curation -----------------------------------------------------
    def session(self, session_id: str) -> Session:
        """The transcript of one conversation (``sessions/<agent>/<id>.jsonl``)."""
        from memdir.context import Session

        return Session(self.home, session_id, agent_id=self.agent_id)

    def sessions(self) -> list[SessionInfo]:
        from memdir.context import list_sessions

        return list_sessions(self.home, self.agent_id)

    def _transcript(self, session_id: str) -> list[Message]:
        session = self.session(session_id)
        if not session.exists:
            raise NotFoundError(
                f"no session {session_id!r} for {self.agent_id or 'the global workspace'}",
                next_step=NextStep("list them with {}", "list_sessions"),
            )
        from memdir.curate import transcript_messages

        return transcript_messages(session.load())

    def extract(self, session_id: str, scheduled: bool = False) -> ExtractionResult:
        """Extract durable memory from a finished conversation (model, else heuristics)."""
        from memdir.curate import ExtractionTrigger, extract_after_conversation

        return extract_after_conversation(
            self.workspace, self._transcript(session_id), model=self.chat_model,
            save_fact=self._save_fact,
            trigger=ExtractionTrigger(scheduled=scheduled, session_id=session_id),
            policy=composition.extraction_policy(self.settings),
        )  # fmt: skip

    def consolidate(
        self, dry_run: bool = False, days: int | None = None, progress: Progress | None = None
    ) -> ConsolidationResult:
        """Promote what is stable in recent daily notes into MEMORY.md (loss-guarded)."""
        from memdir.curate import consolidate

        return consolidate(
            self.workspace, model=self.chat_model,
            days=days or self.settings.curate.consolidate_days, dry_run=dry_run,
            progress=progress,
        )  # fmt: skip

    def end_session(self, session_id: str) -> SessionNote | None:
        """Write the last messages of a session as ``memory/YYYY-MM-DD-<slug>.md``."""
        from memdir.curate import end_session

        return end_session(
            self.workspace, self._transcript(session_id), model=self.chat_model,
            count=self.settings.curate.session_end_messages, session_id=session_id,
        )  # fmt: skip


def _no_new_secrets(relative: str, before: str, after: str) -> None:
    """Refuse a write or edit whose result holds a credential the file did not hold."""
    reject_new_secrets(before, after, f"the change to {relative!r}")


def _configured_calibration(cfg: SearchSettings) -> Calibration | None:
    """``search.calibration_*`` when set; None lets search pick by embedder."""
    if cfg.calibration_cosine_weight is None:
        return None
    return Calibration(
        cosine_weight=cfg.calibration_cosine_weight,
        midpoint=cfg.calibration_midpoint or 0.0,
        slope=cfg.calibration_slope or 1.0,
    )


def _valid_agent(name: str) -> bool:
    try:
        validate_agent_id(name)
    except InvalidInputError:
        return False
    return True
