"""Facts by id: get one, update one (as a supersession) and trace its versions.

An update never rewrites a fact: it saves the new text as a new fact, with a new id,
that supersedes the one named (its line in today's daily note says so), and the old
fact gets an end date. So every version stays readable, ``as_of`` still answers what
was true then, and ``history`` walks the chain both ways, oldest first.

Only the current version of a fact can be updated: updating a superseded one would
fork its history in two, and a forgotten one was retired as wrong. Both are refused
with the id to use instead. The store is per workspace, so an id of another agent's
fact is not found here, like an id that never existed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime

from memdir.embeddings.base import Embedder
from memdir.errors import EditError, InvalidInputError, NextStep, NotFoundError
from memdir.facts.categories import check_category
from memdir.facts.markers import FACT_ID, format_event_line, new_fact_id
from memdir.facts.replay import bind_embedder, fact_of, text_sha
from memdir.facts.safety import check_fact_text
from memdir.facts.saving import FIND_FACT, Clock, SaveOutcome, embed_fact, utc_clock
from memdir.store.contracts import FactStore
from memdir.store.fact_records import Fact, FactEvent, FactFilter, Vector
from memdir.workspace import Workspace

logger = logging.getLogger(__name__)

ID_SHAPE = "'f-' and 10 lower-case letters or digits, e.g. 'f-ab12cd34ef'"


@dataclass(frozen=True)
class FactVersion:
    """A fact with its place in its chain: the fact that superseded it, if any."""

    fact: Fact
    superseded_by: str | None

    @property
    def current(self) -> bool:
        """Valid now: neither superseded nor forgotten."""
        return self.fact.valid_to is None and not self.fact.forgotten


def check_fact_id(fact_id: object) -> str:
    """``fact_id`` if it has the shape of a fact id; ``InvalidInputError`` naming it otherwise."""
    if not isinstance(fact_id, str) or not FACT_ID.fullmatch(fact_id):
        raise InvalidInputError(
            f"{fact_id!r} is not a fact id; ids are {ID_SHAPE}", next_step=FIND_FACT
        )
    return fact_id


def get_fact(store: FactStore, fact_id: str) -> Fact:
    """The fact ``fact_id`` of this workspace, whatever its state; ``NotFoundError`` else."""
    fact = store.get_facts([check_fact_id(fact_id)]).get(fact_id)
    if fact is None:
        raise NotFoundError(f"no fact has the id {fact_id!r}", next_step=FIND_FACT)
    return fact


def _successors(store: FactStore) -> dict[str, str]:
    """For each superseded fact, the id of the fact that superseded it."""
    every = store.list_facts(FactFilter(include_superseded=True, include_forgotten=True))
    return {fact.supersedes: fact.id for fact in every if fact.supersedes}


def get_version(store: FactStore, fact_id: str) -> FactVersion:
    """The fact ``fact_id`` and the id of the fact that superseded it (None: none did)."""
    fact = get_fact(store, fact_id)
    if fact.valid_to is None:
        return FactVersion(fact, None)
    return FactVersion(fact, _successors(store).get(fact.id))


def history(store: FactStore, fact_id: str) -> list[FactVersion]:
    """Every version of the fact ``fact_id`` belongs to, oldest first (itself included)."""
    fact = get_fact(store, fact_id)
    every = {
        f.id: f
        for f in store.list_facts(FactFilter(include_superseded=True, include_forgotten=True))
    }
    every.setdefault(fact.id, fact)
    after = {f.supersedes: f.id for f in every.values() if f.supersedes}
    chain = [fact]
    while chain[0].supersedes and chain[0].supersedes in every and len(chain) <= len(every):
        chain.insert(0, every[chain[0].supersedes])
    while chain[-1].id in after and len(chain) <= len(every):
        chain.append(every[after[chain[-1].id]])
    return [FactVersion(f, after.get(f.id)) for f in chain]


def update_fact(
    store: FactStore,
    embedder: Embedder | None,
    workspace: Workspace,
    fact_id: str,
    text: str,
    *,
    category: str | None = None,
    clock: Clock = utc_clock,
    vector: Vector | None = None,
) -> SaveOutcome:
    """Supersede the fact ``fact_id`` with ``text``: a new fact, a new id, the old one ended.

    ``category`` defaults to the old fact's; its importance carries over. Raises
    ``InvalidInputError`` (bad id, text or category), ``NotFoundError`` (no such fact
    here) and ``EditError`` (the fact is superseded or forgotten: nothing is written).
    """
    check_fact_id(fact_id)
    text = check_fact_text(text)
    chosen = None if category is None else check_category(category)
    if vector is None:
        vector = embed_fact(store, embedder, text)
    if vector is not None and embedder is not None:
        bind_embedder(store, embedder)
    with store.transaction():
        old = get_fact(store, fact_id)
        _check_current(store, old)
        now = clock()
        event = FactEvent(
            "", 0, "fact", new_fact_id(), now, text, chosen or old.category, old.importance,
            old.id,
        )  # fmt: skip
        location = workspace.append_daily(format_event_line(event), date=now.astimezone().date())
        event = replace(event, path=location.path, line=location.start_line)
        fact = fact_of(event)
        ended = replace(old, valid_to=now)
        vectors = None if vector is None else {fact.id: (text_sha(text), vector)}
        store.apply(events=[event], upserts=[fact, ended], vectors=vectors)
    logger.info("updated fact %s as %s at %s", old.id, fact.id, location.cite())
    return SaveOutcome("update", fact, ended, location, f"updated {old.id} by id")


def _check_current(store: FactStore, fact: Fact) -> None:
    if fact.forgotten:
        raise EditError(
            f"fact {fact.id!r} was forgotten ({fact.forgotten_reason}); it cannot be updated",
            next_step=NextStep("save the new text as a new fact, or {}", "recall"),
        )
    if fact.valid_to is not None:
        newer = history(store, fact.id)[-1].fact.id
        raise EditError(
            f"fact {fact.id!r} was superseded at {_stamp(fact.valid_to)}; its latest version "
            f"is {newer!r}: update that id instead"
        )


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")
