"""Facts by id as text for an agent: one fact with its place in its chain, and the chain."""

from __future__ import annotations

from collections.abc import Sequence

from memdir.facts.revisions import FactVersion
from memdir.tools.render import fenced, render_fact


def _state(version: FactVersion) -> str:
    if version.fact.forgotten:
        return "forgotten"
    if version.superseded_by is not None:
        return f"superseded by {version.superseded_by}"
    return "current" if version.fact.valid_to is None else "superseded"


def render_fact_version(version: FactVersion) -> str:
    """One fact by id: its line, its state, and the citation of its line in the note."""
    head = f"Fact {version.fact.id} ({_state(version)}; cite as {version.fact.citation}):"
    return fenced(head, [render_fact(version.fact)])


def render_fact_history(chain: Sequence[FactVersion]) -> str:
    """Every version of a fact, oldest first, each with its state."""
    current = next((v.fact.id for v in chain if v.current), None)
    now = f"current version {current}" if current else "no version is current"
    head = f"{len(chain)} version(s), oldest first ({now}):"
    rows = [f"{n}. {_state(v)}: {render_fact(v.fact)}" for n, v in enumerate(chain, start=1)]
    return fenced(head, rows)
