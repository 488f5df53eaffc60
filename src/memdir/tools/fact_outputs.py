"""The structured results of the fact tools: what MCP sends as ``structuredContent`` beside
the text, and what the REST API's fact routes return.

A fact is always the same object (``FactOutput``): its id, text, category, importance,
salience, its validity (``valid_from``, ``valid_to``, ``current``), the fact it
supersedes and the one that superseded it, whether and why it was forgotten, and the
citation of its line (``path:line``, which ``memory_get`` reads). A recalled fact adds
its score and how the score was made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memdir.facts import Fact, RecalledFact, SaveOutcome
from memdir.facts.activity import RecentActivity
from memdir.facts.revisions import FactVersion
from memdir.facts.salience import fact_salience


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FactOutput(_Output):
    id: str = Field(description="The fact's id, e.g. 'f-ab12cd34ef'.")
    text: str
    category: str
    importance: int = Field(description="1 (trivial) to 10 (critical).")
    salience: float = Field(description="How much the fact weighs now (importance, use, age).")
    recorded_at: datetime
    valid_from: datetime = Field(description="Since when the fact holds.")
    valid_to: datetime | None = Field(description="When a newer fact superseded it; null: never.")
    current: bool = Field(description="Valid now: neither superseded nor forgotten.")
    supersedes: str | None = Field(description="Id of the older fact this one replaced.")
    superseded_by: str | None = Field(description="Id of the newer fact that replaced this one.")
    forgotten_at: datetime | None = None
    forgotten_reason: str | None = None
    citation: str = Field(description="path:line of the fact's line in the daily note.")
    score: float | None = Field(None, description="Recall score (memory_recall only).")
    breakdown: dict[str, Any] | None = Field(
        None, description="How the recall score was made, signal by signal."
    )

    @classmethod
    def of(
        cls,
        fact: Fact,
        successors: Mapping[str, str] | None = None,
        recalled: RecalledFact | None = None,
        now: datetime | None = None,
    ) -> FactOutput:
        successor = (successors or {}).get(fact.id)
        return cls(
            id=fact.id,
            text=fact.text,
            category=fact.category,
            importance=fact.importance,
            salience=round(fact_salience(fact, now or datetime.now(UTC)), 4),
            recorded_at=fact.recorded_at,
            valid_from=fact.valid_from,
            valid_to=fact.valid_to,
            current=fact.valid_to is None and not fact.forgotten,
            supersedes=fact.supersedes,
            superseded_by=successor,
            forgotten_at=fact.forgotten_at,
            forgotten_reason=fact.forgotten_reason,
            citation=fact.citation,
            score=None if recalled is None else recalled.score,
            breakdown=None if recalled is None else asdict(recalled.breakdown),
        )

    @classmethod
    def of_version(cls, version: FactVersion) -> FactOutput:
        known = version.superseded_by
        return cls.of(version.fact, None if known is None else {version.fact.id: known})


def successors_of(facts: Iterable[Fact]) -> dict[str, str]:
    """For each superseded fact among ``facts``, the id of the fact that superseded it."""
    return {fact.supersedes: fact.id for fact in facts if fact.supersedes}


class SaveResult(_Output):
    action: str = Field(description="add, update, supersede, or none (already known).")
    reason: str = Field(description="Why that action was taken.")
    fact: FactOutput | None = Field(description="The fact saved (or the one already known).")
    superseded: FactOutput | None = Field(description="The older fact this save ended.")
    written_to: str | None = Field(description="path:start-end of the line in the daily note.")

    @classmethod
    def of(cls, outcome: SaveOutcome) -> SaveResult:
        fact = outcome.fact
        successors = {} if outcome.superseded is None or fact is None else {
            outcome.superseded.id: fact.id
        }  # fmt: skip
        return cls(
            action=outcome.action,
            reason=outcome.reason,
            fact=None if fact is None else FactOutput.of(fact),
            superseded=None
            if outcome.superseded is None
            else FactOutput.of(outcome.superseded, successors),
            written_to=None if outcome.location is None else outcome.location.cite(),
        )


class RecallResult(_Output):
    query: str
    facts: list[FactOutput] = Field(description="Most relevant first, each with its score.")

    @classmethod
    def of(cls, query: str, found: Sequence[RecalledFact]) -> RecallResult:
        return cls(query=query, facts=[FactOutput.of(r.fact, recalled=r) for r in found])


class FactListResult(_Output):
    total: int = Field(description="How many facts matched, before the limit.")
    facts: list[FactOutput] = Field(description="Newest first, at most limit.")

    @classmethod
    def of(cls, facts: Sequence[Fact], limit: int) -> FactListResult:
        successors = successors_of(facts)
        shown = sorted(facts, key=lambda fact: fact.recorded_at, reverse=True)[:limit]
        return cls(total=len(facts), facts=[FactOutput.of(f, successors) for f in shown])


class ForgetResult(_Output):
    fact: FactOutput = Field(description="The retired fact, with forgotten_at and the reason.")


class FactHistoryResult(_Output):
    fact_id: str = Field(description="The id asked about.")
    current_id: str | None = Field(description="Id of the version valid now; null: none is.")
    versions: list[FactOutput] = Field(description="Every version of the fact, oldest first.")

    @classmethod
    def of(cls, fact_id: str, chain: Sequence[FactVersion]) -> FactHistoryResult:
        versions = [FactOutput.of_version(version) for version in chain]
        current = next((v.id for v in versions if v.current), None)
        return cls(fact_id=fact_id, current_id=current, versions=versions)


class FileChangeOutput(_Output):
    path: str
    modified: datetime
    size_bytes: int


class FactChangeOutput(_Output):
    kind: str = Field(description="saved, superseded or forgotten.")
    at: datetime
    fact: FactOutput


class RecentResult(_Output):
    since: datetime
    days: float
    files: list[FileChangeOutput] = Field(description="Files written, newest first.")
    facts: list[FactChangeOutput] = Field(description="Facts changed, newest first.")
    more_files: int = Field(description="How many more files changed than are listed.")
    more_facts: int = Field(description="How many more fact changes than are listed.")

    @classmethod
    def of(
        cls, activity: RecentActivity, days: float, successors: Mapping[str, str]
    ) -> RecentResult:
        return cls(
            since=activity.since,
            days=days,
            files=[
                FileChangeOutput(path=c.path, modified=c.modified, size_bytes=c.size_bytes)
                for c in activity.files
            ],
            facts=[
                FactChangeOutput(kind=c.kind, at=c.at, fact=FactOutput.of(c.fact, successors))
                for c in activity.facts
            ],
            more_files=activity.more_files,
            more_facts=activity.more_facts,
        )
