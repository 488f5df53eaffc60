"""Saving and forgetting facts: one event, written to the daily note, then to the store.

Every change is one value, a ``FactEvent``, from which everything else derives: its
line in today's daily note (``markers.format_event_line``), the fact it creates or
changes (``replay``'s rules) and the vector of its text. The line is appended under the
note's lock, which gives the event its line number; the event and its facts are then
recorded in the same store transaction, so the store always equals what a rebuild from
the notes would give (apart from access statistics). Nothing is read back: the append
says where the line landed. A save first looks for candidates (the most similar facts
valid now) and asks ``decide`` (an LLM, when the caller plugs one in) or the documented
heuristic (``decide``) whether the text is new, a repeat, or an update that supersedes
an older fact.

Notes changed behind the store's back (a save killed between its append and its record,
an edit by hand) are caught up by a facts sync (``replay.sync_facts``), which the
composition root runs when it opens the facts and on every sync: not on each save.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np

from memdir.embeddings.base import Embedder, Vectors
from memdir.errors import InvalidInputError, NextStep, NotFoundError
from memdir.facts.categories import check_category, classify_fact
from memdir.facts.decide import (
    Action,
    DecideFn,
    FactCandidate,
    FactDecision,
    decide_heuristically,
)
from memdir.facts.markers import FACT_ID, format_event_line, new_fact_id
from memdir.facts.recall import build_fact_query, check_embedder, fuse_ranks, recall
from memdir.facts.replay import bind_embedder, fact_of, text_sha
from memdir.facts.safety import check_fact_text, check_importance, check_reason
from memdir.store.contracts import FactStore
from memdir.store.fact_records import Fact, FactEvent, FactFilter, Vector
from memdir.workspace import NoteLocation, Workspace

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]
DEFAULT_IMPORTANCE = 5
CANDIDATES = 8
FORGET_MIN_COSINE = 0.5
_SHOWN_CHARS = 120
FIND_FACT = NextStep("find it with {}", "recall")


@dataclass(frozen=True)
class SaveOutcome:
    """What a save did.

    ``action`` is the decision taken; ``fact`` the new fact (``add``, ``update``,
    ``supersede``) or the reinforced one (``none`` with a target), else None;
    ``superseded`` the older fact now ending (with its ``valid_to``);
    ``location`` where a line landed in the daily note (None if none was written).
    """

    action: Action
    fact: Fact | None
    superseded: Fact | None
    location: NoteLocation | None
    reason: str


def utc_clock() -> datetime:
    return datetime.now(UTC)


def find_candidates(
    store: FactStore, embedder: Embedder | None, text: str, vector: Vectors | None,
    now: datetime,
) -> list[FactCandidate]:  # fmt: skip
    """The facts valid now most similar to ``text`` (keyword and vector), best first."""
    filt = FactFilter(as_of=now)
    keywords = build_fact_query(text)
    keyword = store.keyword_search(keywords, filt, CANDIDATES) if keywords else []
    vectors = store.vector_search(vector, filt, CANDIDATES) if vector is not None else []
    fused = fuse_ranks([keyword, vectors])
    cosines = dict(vectors)
    facts = store.get_facts(fused)
    ranked = sorted(facts, key=lambda fid: (-fused[fid], fid))
    return [FactCandidate(facts[fid], cosines.get(fid)) for fid in ranked]


def embed_fact(store: FactStore, embedder: Embedder | None, text: str) -> Vector | None:
    """The vector of a fact's text (None keyword-only): computed once per save, for its
    candidates, its row and the index unit of its line (``memdir.memory.writes``)."""
    if embedder is None:
        return None
    check_embedder(store, embedder)
    vector: Vector = np.asarray(embedder.embed_documents([text])[0], dtype=np.float32)
    return vector


def _append(workspace: Workspace, event: FactEvent) -> tuple[FactEvent, NoteLocation]:
    """Append ``event``'s line to the daily note of its day; the event, now at its line."""
    location = workspace.append_daily(format_event_line(event), date=event.at.astimezone().date())
    return replace(event, path=location.path, line=location.start_line), location


def _checked_decision(decision: FactDecision, candidates: Sequence[FactCandidate]) -> FactDecision:
    known = {c.fact.id for c in candidates}
    if decision.target_id is None or decision.target_id in known:
        return decision
    logger.warning(
        "the fact decision named %s, which is not a candidate; saving as a new fact",
        decision.target_id,
    )
    return FactDecision(action="add", reason=f"unknown target {decision.target_id}")


def save_fact(
    store: FactStore,
    embedder: Embedder | None,
    workspace: Workspace,
    text: str,
    *,
    category: str | None = None,
    importance: int | None = None,
    decide: DecideFn | None = None,
    clock: Clock = utc_clock,
    vector: Vector | None = None,
    until: datetime | None = None,
) -> SaveOutcome:
    """Save ``text`` as a fact, or reinforce/supersede a known one (module docstring).

    Raises ``InvalidInputError`` (empty, too long, several lines, marker syntax,
    bad category or importance) and ``SecretRejectedError`` before writing anything.
    Finding the candidates, deciding, appending the line and recording it run in
    one store transaction, so concurrent saves and syncs of the scope see each
    other's facts and two updates of one subject never both supersede the same
    fact. A model's decision is asked for outside that lock and used only if the
    candidates are still the same inside it. ``vector`` is the text's vector when the
    caller embedded it already (``embed_fact``). ``until`` ends the fact's validity then
    (``valid_until``): after it, the fact is history like a superseded one.
    """
    text = check_fact_text(text)
    explicit_category = None if category is None else check_category(category)
    explicit_importance = None if importance is None else check_importance(importance)
    if vector is None:
        vector = embed_fact(store, embedder, text)
    if vector is not None and embedder is not None:
        bind_embedder(store, embedder)  # before the transaction: binding locks the whole schema
    advance: tuple[list[str], FactDecision] | None = None
    if decide is not None:
        early = find_candidates(store, embedder, text, vector, clock())
        advance = ([c.fact.id for c in early], _checked_decision(decide(text, early), early))
    with store.transaction():
        now = clock()
        candidates = find_candidates(store, embedder, text, vector, now)
        if advance is not None and advance[0] == [c.fact.id for c in candidates]:
            decision = advance[1]
        elif decide is None:
            decision = decide_heuristically(text, candidates, explicit_category)
        else:
            decision = _checked_decision(decide(text, candidates), candidates)
        target = next((c.fact for c in candidates if c.fact.id == decision.target_id), None)
        if decision.action == "none":
            return _reinforce(store, workspace, target, explicit_importance, now, decision.reason)
        if decision.action == "add":
            target = None
        chosen_category = explicit_category or (
            target.category if target else classify_fact(text, embedder, vector)
        )
        chosen_importance = explicit_importance or (
            target.importance if target else DEFAULT_IMPORTANCE
        )
        supersedes = None if target is None else target.id
        event, location = _append(workspace, FactEvent(
            "", 0, "fact", new_fact_id(), now, text, chosen_category, chosen_importance,
            supersedes, until=until,
        ))  # fmt: skip
        fact = fact_of(event)
        ended = None if target is None else replace(target, valid_to=now)
        vectors = None if vector is None else {fact.id: (text_sha(text), vector)}
        upserts = [fact] if ended is None else [fact, ended]
        store.apply(events=[event], upserts=upserts, vectors=vectors)
    logger.info("saved fact %s (%s) at %s", fact.id, decision.action, location.cite())
    return SaveOutcome(decision.action, fact, ended, location, decision.reason)


def _reinforce(
    store: FactStore,
    workspace: Workspace,
    target: Fact | None,
    importance: int | None,
    now: datetime,
    reason: str,
) -> SaveOutcome:
    if target is None:
        return SaveOutcome("none", None, None, None, reason)
    location = None
    if importance is not None and importance > target.importance:
        event = FactEvent("", 0, "reinforce", target.id, now, target.text, importance=importance)
        event, location = _append(workspace, event)
        target = replace(target, importance=importance)
        store.apply(events=[event], upserts=[target])
    store.record_access([target.id], now)
    updated = store.get_facts([target.id]).get(target.id, target)
    return SaveOutcome("none", updated, None, location, reason)


def forget(
    store: FactStore,
    workspace: Workspace,
    *,
    fact_id: str | None = None,
    query: str | None = None,
    reason: str,
    embedder: Embedder | None = None,
    clock: Clock = utc_clock,
) -> Fact:
    """Hide a fact (by id, or the best match of ``query``) from recall, recording why.

    The fact stays listable with ``include_forgotten``; a forget line with the
    reason goes to today's daily note. Forgetting a forgotten fact changes nothing.
    """
    if (fact_id is None) == (query is None):
        raise InvalidInputError("pass exactly one of fact_id or query to forget a fact")
    reason = check_reason(reason)
    with store.transaction():
        now = clock()
        fact = _find_to_forget(store, embedder, fact_id, query, now)
        if fact.forgotten:
            return fact
        shown = (
            fact.text if len(fact.text) <= _SHOWN_CHARS else fact.text[: _SHOWN_CHARS - 3] + "..."
        )
        event = FactEvent("", 0, "forget", fact.id, now, shown, reason=reason)
        event, location = _append(workspace, event)
        forgotten = replace(fact, forgotten_at=now, forgotten_reason=reason)
        store.apply(events=[event], upserts=[forgotten])
    logger.info("forgot fact %s at %s", fact.id, location.cite())
    return forgotten


def _find_to_forget(
    store: FactStore, embedder: Embedder | None, fact_id: str | None, query: str | None,
    now: datetime,
) -> Fact:  # fmt: skip
    if fact_id is not None:
        if not isinstance(fact_id, str) or not FACT_ID.fullmatch(fact_id):
            raise InvalidInputError(
                f"fact id {fact_id!r} is not valid; ids look like 'f-ab12cd34ef'",
                next_step=FIND_FACT,
            )
        fact = store.get_facts([fact_id]).get(fact_id)
        if fact is None:
            raise NotFoundError(f"no fact has the id {fact_id!r}", next_step=FIND_FACT)
        return fact
    hits = recall(store, embedder, query or "", limit=1, now=now, record_access=False)
    best = hits[0] if hits else None
    if best is None or (
        best.breakdown.keyword is None and (best.breakdown.vector or 0.0) < FORGET_MIN_COSINE
    ):
        raise NotFoundError(
            f"no fact matches {query!r} closely enough to forget it",
            next_step=NextStep("find the fact with {} and forget it by id", "recall"),
        )
    return best.fact
