"""Holding extraction's appends for review: facts and the daily entry kept, not written.

Under ``curate.review`` nothing extraction decides lands before a person accepts it: its
rewrites are collected by the loss guard (``guard.proposing``) and its appends, the new
facts and the daily-note entry, are collected here (``holding``), to become one proposal
(``memory.curation_review``). A held fact is checked as a save would check it (its text,
no credential) so a proposal never carries what a save would refuse.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from memdir.facts.safety import check_fact_text


@dataclass(frozen=True)
class HeldFact:
    """A fact extraction would save: what ``Memory.save`` takes."""

    text: str
    category: str | None = None
    importance: int | None = None
    valid_until: str | None = None  # ISO 8601, when the fact has an end


@dataclass(frozen=True)
class HeldEntry:
    """A daily-note entry extraction would append: its heading, its text and its day."""

    heading: str
    text: str
    day: dt.date


@dataclass
class Held:
    """What one extraction would append, collected under ``holding``."""

    facts: list[HeldFact] = field(default_factory=list)
    entries: list[HeldEntry] = field(default_factory=list)

    def hold_fact(self, text: str, category: str | None, importance: int | None) -> None:
        """Keep a fact for review; ``MemdirError`` (say, a credential) as a save would."""
        self.facts.append(HeldFact(check_fact_text(text), category, importance))

    def __bool__(self) -> bool:
        return bool(self.facts or self.entries)


_holding: ContextVar[Held | None] = ContextVar("memdir_holding", default=None)


@contextmanager
def holding() -> Iterator[Held]:
    """Within the block, extraction saves no fact and appends no entry: it holds them."""
    held = Held()
    token = _holding.set(held)
    try:
        yield held
    finally:
        _holding.reset(token)


def held() -> Held | None:
    """What the ``holding`` block in force collects, or None outside one."""
    return _holding.get()
