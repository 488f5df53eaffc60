"""The ``Memory`` facade: the one object every interface calls.

This is the composition root. It reads configuration, builds the workspace,
the stores, the embedder and the chat model, and wires the layers together.
Nothing below it reads configuration; everything below receives values.
Test doubles (``HashEmbedder``, a scripted chat model) are passed in here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memdir.config import LoadedSettings, Settings, load_settings
from memdir.embeddings.base import Embedder
from memdir.errors import (
    InvalidInputError,
    NotFoundError,
)
from memdir.facts import Fact, FactBook, RecalledFact, SaveOutcome
from memdir.facts.activity import RecentActivity, collect_activity
from memdir.facts.revisions import FactVersion
from memdir.home import Home, source_of
from memdir.index import Freshness, SyncReport, freshness_of
from memdir.memory import composition, curation, indexing, paths, prompt_inputs, versions
from memdir.memory.file_writes import FileWriteMethods
from memdir.memory.indexing import Indexer
from memdir.memory.reads import best_effort
from memdir.memory.stores import Stores
from memdir.memory.writes import WritePath
from memdir.progress import Progress
from memdir.prompt import ContextReport, PromptInputs, build_context_report, build_system_prompt
from memdir.search import SearchResults, search
from memdir.store import IndexStats, IndexWriter
from memdir.tools import TOOL_NAMES, Scope
from memdir.workspace import (
    FileInfo,
    FileSlice,
    PromptFile,
    Workspace,
    revisions,
)
from memdir.workspace.revisions import FileText
from memdir.workspace.sources import cite_path

if TYPE_CHECKING:  # curation, sessions and models load when used: a search never needs them
    from memdir.context import Session, SessionInfo
    from memdir.curate import ConsolidationResult, ExtractionResult, SessionNote
    from memdir.llm import ChatModel

log = logging.getLogger(__name__)

ProgressCallback = Progress  # called with a ProgressUpdate per file read, per batch embedded
T = TypeVar("T")
_UNSET: Any = object()
MAX_RECENT_DAYS = 3650
BASE_PROMPT = prompt_inputs.BASE_PROMPT


class Memory(FileWriteMethods, versions.HistoryMethods):
    """Persistent memory of one agent (or of the global workspace when ``agent_id`` is None).

    Open it with :meth:`open`; use it as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        loaded: LoadedSettings,
        agent_id: str | None,
        embedder: Embedder | None,
        chat_model: ChatModel | None = None,
        freshness: Freshness | None = None,
    ) -> None:
        self.settings: Settings = loaded.settings
        composition.extra_index_paths(self.settings)  # a bad index.extra_paths fails here
        self.loaded = loaded
        self.home = loaded.home
        self.layout = Home(self.home)
        self.workspace = Workspace(self.home, agent_id)
        self.agent_id = self.workspace.agent_id
        self.source = source_of(self.agent_id)
        self.embedder = embedder
        self.chat_model = chat_model
        self.stores = Stores(
            self.layout, self.settings, embedder, lambda: composition.model_decider(self.chat_model)
        )
        self.freshness = freshness or freshness_of(self.home)  # shared by the process's
        self.indexer = Indexer(
            self.layout, self.agent_id, self.settings, embedder, self.stores, self.freshness
        )
        self.history, self.trace = versions.open_history(self.workspace, self.settings)
        self.writes = WritePath(
            self.workspace, self.source, self.settings, self.indexer, self.freshness, self.history
        )

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
        freshness: Freshness | None = None,
    ) -> Memory:
        """Open the memory under ``home`` (default ``$MEMDIR_HOME`` or ``~/.memdir``).

        ``embedder`` replaces the configured embedding provider (pass ``None`` for
        keyword-only search, or a ``HashEmbedder`` in tests); ``chat_model``
        replaces the configured LLM (``None`` for heuristics, a ``ScriptedChatModel``
        in tests). ``freshness`` is what this memory knows of the index's freshness
        (``index.freshness``): by default what every ``Memory`` of this process over
        ``home`` shares; a CLI command passes its own, being a run of its own. Opening
        writes nothing; :meth:`init` seeds the workspace.
        """
        loaded = settings or load_settings(home, overrides)
        if embedder is _UNSET:
            embedder = composition.configured_embedder(loaded.settings)
        if chat_model is _UNSET:
            chat_model = composition.configured_chat_model(loaded.settings)
        return cls(loaded, agent_id, embedder, chat_model, freshness)

    def close(self) -> None:
        self.history.flush()  # the versions of this memory's writes are committed
        self.stores.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def index_path(self) -> Path:
        return self.layout.index_db

    @property
    def facts_path(self) -> Path:
        """The SQLite facts database: apart from the index, so a save never queues behind
        the re-indexing of a large note, nor an index write behind saves."""
        return self.layout.facts_db

    @property
    def store(self) -> IndexWriter:
        """The index store: SQLite under ``index/`` or PostgreSQL (``store.backend``)."""
        return self.stores.index

    @property
    def facts(self) -> FactBook:
        """The structured facts of this workspace (derived from marked daily-note lines)."""
        return self.stores.facts(self.source)

    def _require_home(self, write: bool = False) -> None:
        """A write may create the home (its files create their folders); a read of a
        folder that is no memdir home is refused: it would create ``index/`` there and
        answer from nothing (a mistyped ``--home`` or ``MEMDIR_HOME``)."""
        if write or self.layout.exists():
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
        return paths.locate(self.workspace, path, self.settings.search.cross_agent)

    def _cited(self, workspace: Workspace, path: str) -> str:
        """``path`` of ``workspace`` as this session cites it (plain for its own files)."""
        return cite_path(source_of(workspace.agent_id), path, self.source)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> FileSlice:
        """A range of a file; ``.text`` carries line numbers (``memory_get``). ``path`` may
        be a citation's path (``global:...``, ``agent:<id>:...``; see ``memory.paths.locate``)."""
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

    def read_text(self, path: str) -> FileText:
        """A whole file with its ``.sha256``: the ``expected_sha256`` of a change that must
        not overwrite one made since (``workspace.revisions``). ``path`` as for :meth:`get`."""
        self._require_home()
        workspace, relative = self._locate(path)
        text = revisions.read_text(workspace, relative)
        return replace(text, path=self._cited(workspace, text.path))

    # -- prompt --------------------------------------------------------------------
    def _prompt_inputs(
        self, now: datetime | None = None, session_kind: str | None = None
    ) -> PromptInputs:
        now = now or datetime.now(prompt_inputs.prompt_timezone(self.settings.prompt.timezone))
        budget = self.settings.prompt.facts_budget_chars
        facts = self._recovering(lambda: prompt_inputs.fact_lines(self.facts, budget))
        embedder = self.embedder.model if self.embedder else "none (keyword-only)"
        return prompt_inputs.assemble_prompt_inputs(
            self.workspace, self.settings, embedder, now, session_kind, TOOL_NAMES, facts
        )

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
        setting = self.workspace.set_prompt_file(path, enabled=enabled, sort_order=sort_order)
        self.history.record_all("set_prompt_file", f"prompt settings of {path}")
        return setting

    @property
    def ritual_active(self) -> bool:
        """Whether this workspace's first-run ritual (its own BOOTSTRAP.md) is under way."""
        return self.workspace.ritual_active

    def finish_ritual(self) -> bool:
        """End the first-run ritual: delete this workspace's BOOTSTRAP.md (False: none)."""
        finished = self.workspace.finish_ritual()
        self.history.record_all("finish_ritual", "the first-run ritual ended")
        return finished

    # -- index and search ----------------------------------------------------------
    def agents(self) -> list[str]:
        """Ids of the agent workspaces under this home."""
        return self.layout.agents()

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
        report = self.indexer.sync(progress, all_agents, optimize)
        self.history.pick_up_outside()  # edits made without memdir become a version
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
        return self.indexer.refresh(scope)

    def rebuild(self, progress: ProgressCallback | None = None) -> SyncReport:
        """Rebuild the derived index from the files (keeps the embedding cache).

        A database that cannot be opened (corrupt, truncated, not SQLite) is deleted
        and built anew; the Markdown files are the truth, so nothing is lost.
        """
        return self.indexer.rebuild(progress)

    def _recovering(self, action: Callable[[], T]) -> T:
        return self.indexer.recovering(action)

    def index_status(self) -> IndexStats:
        self._require_home(write=False)
        return self.store.stats()

    def search(
        self,
        query: str,
        max_results: int | None = None,
        min_score: float | None = None,
        scope: Scope = "agent",
        include_history: bool = False,
        *,
        fresh: bool = True,
    ) -> SearchResults:
        """Hybrid search over the memory files of this agent (and the global workspace).

        The same for every interface: the index is first brought as far up to date as a
        search needs (:meth:`refresh`; ``fresh=False`` skips it); lines of facts that are
        superseded or forgotten (and the records of forgets) are left out, and
        ``include_history`` returns them after the current hits, marked
        (``SearchHit.retired``); each hit's ``path`` is its citation's path (prefixed
        for a file outside this session's workspace).
        """
        self._require_home(write=False)
        cfg = self.settings.search
        if scope == "all" and not cfg.cross_agent:  # the global session's too
            raise InvalidInputError(
                "searching all agents is disabled on this home; search with scope 'agent' (this "
                "workspace and the global one) or 'global' instead. The home's owner can allow "
                "it: set search.cross_agent = true"
            )
        options = indexing.search_options(cfg, max_results, min_score, include_history)
        sources = indexing.sources(self.layout, self.agent_id, scope)
        if fresh:  # a full disk or a read-only home answers from the index as it is
            best_effort("bringing the index up to date", lambda: self.refresh(scope), None)

        def run() -> SearchResults:
            retired = self.stores.facts_reader(self.source)  # read beside the saves
            return search(
                self.store, self.embedder, query, sources=sources, options=options,
                facts=retired,
            )  # fmt: skip

        results = self._recovering(run)
        cited = tuple(replace(h, path=cite_path(h.source, h.path, self.source)) for h in results)
        searched = self._recovering(lambda: self.store.count_files(sources))
        self.trace.searched(query, cited)
        return replace(results, hits=cited, searched_files=searched)

    # -- facts -------------------------------------------------------------------
    def save(
        self,
        content: str,
        category: str | None = None,
        importance: int | None = None,
        valid_until: datetime | None = None,
    ) -> SaveOutcome:
        """Save a fact to today's daily note and the facts store (``memory_save``).

        A near-duplicate reinforces the existing fact; an update supersedes the old one.
        The saved line is searchable when this returns. After ``valid_until`` the fact is
        history, as if superseded (a naive time is local).
        """
        return self.writes.save(self.facts, content, category, importance, valid_until)

    def recall(
        self, query: str, category: str | None = None, as_of: datetime | None = None, limit: int = 5
    ) -> list[RecalledFact]:
        """Facts valid now (or ``as_of``) that answer ``query`` (``memory_recall``)."""
        self._require_home(write=False)
        floor = composition.recall_floor(self.embedder, self.settings.search.min_score)
        return self.trace.recalled(query, self._recovering(
            lambda: self._recall_book().recall(
                query, category=category, as_of=as_of, limit=limit, floor=floor
            )
        ))  # fmt: skip

    def _recall_book(self) -> FactBook:
        """The facts a recall reads, on a connection of its own (``_facts_reader``): a
        recall never queues behind saves."""
        book = self.facts
        reader = self.stores.facts_reader(self.source, "recall")
        return FactBook(reader, book.embedder, book.workspace, clock=book.clock)

    def forget(
        self, fact_id: str | None = None, query: str | None = None, reason: str = ""
    ) -> Fact:
        """Hide a fact from recall and record why in the daily note (``memory_forget``)."""
        if not reason.strip():
            raise InvalidInputError("forgetting a fact needs a reason; it is kept for audit")
        return self.writes.forget(self.facts, fact_id, query, reason)

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

    def get_fact(self, fact_id: str) -> FactVersion:
        """The fact ``fact_id`` of this workspace, whatever its state, with the id of the
        fact that superseded it; another workspace's id is not found here."""
        self._require_home(write=False)
        return self._recovering(lambda: self.facts.version(fact_id))

    def update_fact(self, fact_id: str, text: str, category: str | None = None) -> SaveOutcome:
        """Supersede the fact ``fact_id`` with ``text``: a new fact with a new id, the old one
        ended and kept (``facts.revisions``). The new line is searchable when this returns."""
        return self.writes.update_fact(self.facts, fact_id, text, category)

    def fact_history(self, fact_id: str) -> list[FactVersion]:
        """Every version of the fact ``fact_id``, oldest first, each with its successor."""
        self._require_home(write=False)
        return self._recovering(lambda: self.facts.history(fact_id))

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

    def extract(self, session_id: str, scheduled: bool = False) -> ExtractionResult:
        """Extract durable memory from a finished conversation (model, else heuristics)."""
        session, model = self.session(session_id), self.chat_model
        return curation.extract(
            self.workspace, session, model, self.settings, self._save_fact, scheduled, self.history
        )

    def consolidate(
        self, dry_run: bool = False, days: int | None = None, progress: Progress | None = None
    ) -> ConsolidationResult:
        """Promote what is stable in recent daily notes into MEMORY.md (loss-guarded)."""
        days = days or self.settings.curate.consolidate_days
        model, history = self.chat_model, self.history
        review = self.settings.curate.review
        return curation.consolidate(self.workspace, model, dry_run, days, progress, history, review)

    def end_session(self, session_id: str) -> SessionNote | None:
        """Write the last messages of a session as ``memory/YYYY-MM-DD-<slug>.md``."""
        count = self.settings.curate.session_end_messages
        session, history = self.session(session_id), self.history
        return curation.end_session(self.workspace, session, self.chat_model, count, history)
