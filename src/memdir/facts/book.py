"""``FactBook``: the facts API the composition root (``memdir.memory``) calls.

It binds a store, an optional embedder, a workspace, an optional LLM ``decide``
and a clock, and forwards to the functions of ``saving``, ``recall``,
``render`` and ``replay``, which remain usable on their own.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from types import TracebackType

from memdir.embeddings.base import Embedder
from memdir.errors import NotFoundError
from memdir.facts import revisions
from memdir.facts.decide import DecideFn
from memdir.facts.recall import RecalledFact, RecallFloor, list_facts, recall
from memdir.facts.render import format_facts_for_prompt, top_salient_facts
from memdir.facts.replay import FactSyncReport, rebuild_facts, sync_facts
from memdir.facts.revisions import FactVersion
from memdir.facts.saving import (
    FIND_FACT,
    Clock,
    SaveOutcome,
    embed_fact,
    forget,
    save_fact,
    utc_clock,
)
from memdir.home import Home, source_of
from memdir.store.contracts import FactStore
from memdir.store.fact_records import Fact, Vector
from memdir.store.open import StoreOptions, open_backend
from memdir.workspace import Workspace


class FactBook:
    """Structured memory over one workspace: save, recall, forget, list, sync.

    ``store`` must be open. ``embedder`` None means keyword-only. ``decide``
    (an LLM returning ``FactDecision``) replaces the heuristic dedup/supersede
    rules; ``clock`` returns an aware datetime (default: now, UTC).
    """

    def __init__(
        self,
        store: FactStore,
        embedder: Embedder | None,
        workspace: Workspace,
        decide: DecideFn | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.workspace = workspace
        self.decide = decide
        self.clock = clock or utc_clock

    @classmethod
    def open(
        cls,
        home: Path | str,
        embedder: Embedder | None,
        agent_id: str | None = None,
        decide: DecideFn | None = None,
        clock: Clock | None = None,
    ) -> FactBook:
        """Open the facts of ``home`` (``<home>/index/facts.db``), global or one agent's."""
        workspace = Workspace(Path(home), agent_id)
        backend = open_backend(StoreOptions(index_dir=Home(Path(home)).index_dir))
        store = backend.open_facts(source_of(workspace.agent_id))
        return cls(store, embedder, workspace, decide, clock)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> FactBook:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def save(
        self,
        text: str,
        category: str | None = None,
        importance: int | None = None,
        vector: Vector | None = None,
    ) -> SaveOutcome:
        """Save ``text`` (``saving.save_fact``; ``vector``: its vector, when embedded already)."""
        return save_fact(
            self.store, self.embedder, self.workspace, text, category=category,
            importance=importance, decide=self.decide, clock=self.clock, vector=vector,
        )  # fmt: skip

    def embed(self, text: str) -> Vector | None:
        """The vector a save of ``text`` records (None keyword-only)."""
        return embed_fact(self.store, self.embedder, text)

    def recall(
        self,
        query: str,
        *,
        category: str | None = None,
        as_of: datetime | None = None,
        limit: int = 5,
        floor: RecallFloor | None = None,
    ) -> list[RecalledFact]:
        return recall(
            self.store, self.embedder, query,
            category=category, as_of=as_of, limit=limit, now=self.clock(), floor=floor,
        )  # fmt: skip

    def forget(self, fact_id: str | None = None, query: str | None = None, *, reason: str) -> Fact:
        return forget(
            self.store, self.workspace,
            fact_id=fact_id, query=query, reason=reason, embedder=self.embedder, clock=self.clock,
        )  # fmt: skip

    def get(self, fact_id: str) -> Fact:
        fact = self.store.get_facts([fact_id]).get(fact_id)
        if fact is None:
            raise NotFoundError(f"no fact has the id {fact_id!r}", next_step=FIND_FACT)
        return fact

    def version(self, fact_id: str) -> FactVersion:
        """The fact ``fact_id`` with the id of the fact that superseded it (``revisions``)."""
        return revisions.get_version(self.store, fact_id)

    def history(self, fact_id: str) -> list[FactVersion]:
        """Every version of the fact ``fact_id``, oldest first (``revisions.history``)."""
        return revisions.history(self.store, fact_id)

    def update(
        self, fact_id: str, text: str, category: str | None = None, vector: Vector | None = None
    ) -> SaveOutcome:
        """Supersede ``fact_id`` with ``text`` (``revisions.update_fact``)."""
        return revisions.update_fact(
            self.store, self.embedder, self.workspace, fact_id, text,
            category=category, clock=self.clock, vector=vector,
        )  # fmt: skip

    def list_facts(
        self,
        category: str | None = None,
        as_of: datetime | None = None,
        include_superseded: bool = False,
        include_forgotten: bool = False,
    ) -> list[Fact]:
        return list_facts(self.store, category, as_of, include_superseded, include_forgotten)

    def top_salient(self, limit: int = 20, budget_chars: int = 2_000) -> list[Fact]:
        return top_salient_facts(self.store, limit, budget_chars, now=self.clock())

    def prompt_block(self, limit: int = 20, budget_chars: int = 2_000) -> str:
        """The most salient facts, fenced as data, for the system prompt."""
        return format_facts_for_prompt(self.top_salient(limit, budget_chars))

    def _notes(self) -> list[tuple[str, Path]]:
        return [(note.relpath, note.path) for note in self.workspace.list_daily_notes()]

    def sync(self) -> FactSyncReport:
        """Re-read changed daily notes (edited or deleted fact lines take effect)."""
        return sync_facts(self.store, self.embedder, self._notes)  # listed inside its lock

    def rebuild(self) -> FactSyncReport:
        """Drop the facts tables of this workspace and replay every daily note."""
        return rebuild_facts(self.store, self.embedder, self._notes)
