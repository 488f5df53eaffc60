"""Context creators: turn scored records into the messages a model gets, under a token limit.

``ScoreBasedContextCreator`` scores every record on five signals, each in [0, 1]:

* recency: the rank of the record's timestamp among the candidates' distinct timestamps
  (newest 1, oldest 0; records of one instant share a rank, all 1 when every timestamp
  is the same, so the order they came in never decides);
* similarity: the block's score (search score or chat-history decay) over the best one;
* importance: the record's importance over 10;
* frequency: how often this creator returned the record before, ``n / (n + 1)``;
* task: 1 for a record of the creator's task, 0 otherwise (0 for all without a task);

sums them with ``ContextWeights``, then packs greedily, best first, skipping a
record that does not fit and trying the next. ``RecencyContextCreator`` keeps the
newest records that fit and stops at the first that does not (no gaps).
``RandomContextCreator`` packs the records in a random order (seeded, so a run can be
repeated): a baseline that tells whether a scoring helps at all.

Every creator may be given a ``task_id``: records of another task are partitioned
out before anything is scored (records without a task are shared by all tasks).
All keep every system record (first, whatever the scores; a system prompt over the
limit is an error), keep an assistant tool call and its tool results together or
drop them together (a tool result whose call is absent is dropped), and return the
chosen messages in chronological order with the token count
(``memdir.llm.estimate_messages_tokens``, which includes the reply primer).
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memdir.camel.records import ContextRecord
from memdir.errors import InvalidInputError
from memdir.llm import Message, estimate_message_tokens, estimate_messages_tokens

logger = logging.getLogger(__name__)

REPLY_PRIMER_TOKENS = estimate_messages_tokens([])


@runtime_checkable
class ContextCreator(Protocol):
    """Builds the model's messages from scored records within ``token_limit`` tokens."""

    token_limit: int

    def create_context(self, records: Sequence[ContextRecord]) -> tuple[list[Message], int]: ...


@dataclass(frozen=True)
class ContextWeights:
    """How much each signal counts in the score; non-negative, not all zero."""

    recency: float = 0.3
    similarity: float = 0.4
    importance: float = 0.2
    frequency: float = 0.1
    task: float = 0.0  # a boost for records of the creator's task over shared ones

    def __post_init__(self) -> None:
        values = (self.recency, self.similarity, self.importance, self.frequency, self.task)
        if any(v < 0 for v in values) or not any(values):
            raise InvalidInputError(
                f"context weights {values!r} must be >= 0 and not all zero; "
                "e.g. ContextWeights(recency=0.3, similarity=0.4, importance=0.2, frequency=0.1)"
            )


@dataclass
class _Unit:
    """Records packed together: one record, or a tool call with its results."""

    items: list[tuple[int, ContextRecord]]
    tokens: int
    score: float = 0.0

    @property
    def newest(self) -> int:
        return max(position for position, _ in self.items)


class _PackingCreator:
    """What the creators share: validation, the task partition, system records, units,
    output order."""

    def __init__(self, token_limit: int, *, task_id: str | None = None) -> None:
        if isinstance(token_limit, bool) or not isinstance(token_limit, int) or token_limit < 1:
            raise InvalidInputError(f"token_limit must be a positive integer, got {token_limit!r}")
        if task_id is not None and (not isinstance(task_id, str) or not task_id.strip()):
            raise InvalidInputError(f"task_id must be a non-empty string or None, got {task_id!r}")
        self.token_limit = token_limit
        self.task_id = task_id

    def in_task(self, records: Sequence[ContextRecord]) -> list[ContextRecord]:
        """``records`` without those of another task (shared records stay)."""
        if self.task_id is None:
            return list(records)
        return [c for c in records if c.record.task_id in (None, self.task_id)]

    def _prepare(
        self, records: Sequence[ContextRecord]
    ) -> tuple[list[tuple[int, ContextRecord]], list[_Unit], int]:
        """System records, packable units and the tokens left for the units."""
        ordered = chronological(dedupe_by_uuid(self.in_task(records)))
        system = [(i, c) for i, c in enumerate(ordered) if c.record.role == "system"]
        used = REPLY_PRIMER_TOKENS + sum(
            estimate_message_tokens(c.record.message) for _, c in system
        )
        if used > self.token_limit:
            raise InvalidInputError(
                f"the system message alone needs {used} tokens, over the token_limit of "
                f"{self.token_limit}; raise token_limit or shorten the system prompt"
            )
        units = group_units([(i, c) for i, c in enumerate(ordered) if c.record.role != "system"])
        return system, units, self.token_limit - used

    @staticmethod
    def _render(
        system: list[tuple[int, ContextRecord]], chosen: list[_Unit]
    ) -> tuple[list[Message], int]:
        picked = sorted(item for unit in chosen for item in unit.items)
        messages = [c.record.message for _, c in system] + [c.record.message for _, c in picked]
        return messages, estimate_messages_tokens(messages)


class ScoreBasedContextCreator(_PackingCreator):
    """Greedy packing by a weighted score of recency, similarity, importance, frequency
    and task."""

    def __init__(
        self,
        token_limit: int,
        weights: ContextWeights | None = None,
        *,
        task_id: str | None = None,
    ) -> None:
        super().__init__(token_limit, task_id=task_id)
        self.weights = weights or ContextWeights()
        self._returned: Counter[str] = Counter()

    def access_count(self, record_uuid: str) -> int:
        """How many contexts this creator built included the record."""
        return self._returned[record_uuid]

    def score(self, records: Sequence[ContextRecord]) -> dict[str, float]:
        """The score of each record (by uuid), as used for packing."""
        ordered = chronological(dedupe_by_uuid(self.in_task(records)))
        best = max((max(c.score, 0.0) for c in ordered), default=0.0)
        instants = sorted({c.record.timestamp for c in ordered})
        rank_of = {when: rank for rank, when in enumerate(instants)}
        last = len(instants) - 1
        w = self.weights
        scores: dict[str, float] = {}
        for context in ordered:
            seen = self._returned[context.record.uuid]
            same_task = self.task_id is not None and context.record.task_id == self.task_id
            scores[context.record.uuid] = (
                w.recency * (rank_of[context.record.timestamp] / last if last > 0 else 1.0)
                + w.similarity * (max(context.score, 0.0) / best if best > 0 else 0.0)
                + w.importance * context.record.importance / 10
                + w.frequency * seen / (seen + 1)
                + w.task * (1.0 if same_task else 0.0)
            )
        return scores

    def create_context(self, records: Sequence[ContextRecord]) -> tuple[list[Message], int]:
        system, units, room = self._prepare(records)
        scores = self.score(records)
        for unit in units:
            unit.score = max(scores[c.record.uuid] for _, c in unit.items)
        chosen: list[_Unit] = []
        for unit in sorted(units, key=lambda u: (-u.score, -u.newest)):
            if unit.tokens <= room:
                chosen.append(unit)
                room -= unit.tokens
        for _, context in [*system, *(item for unit in chosen for item in unit.items)]:
            self._returned[context.record.uuid] += 1
        return self._render(system, chosen)


class RecencyContextCreator(_PackingCreator):
    """The newest records that fit, without gaps: stops at the first one that does not."""

    def create_context(self, records: Sequence[ContextRecord]) -> tuple[list[Message], int]:
        system, units, room = self._prepare(records)
        chosen: list[_Unit] = []
        for unit in sorted(units, key=lambda u: -u.newest):
            if unit.tokens > room:
                break
            chosen.append(unit)
            room -= unit.tokens
        return self._render(system, chosen)


class RandomContextCreator(_PackingCreator):
    """The records that fit, taken in a random order: a baseline for the scoring creators.

    ``seed`` makes the order repeatable (each ``create_context`` call draws anew from
    the creator's generator); ``None`` seeds from the operating system.
    """

    def __init__(
        self, token_limit: int, *, seed: int | None = None, task_id: str | None = None
    ) -> None:
        super().__init__(token_limit, task_id=task_id)
        self.seed = seed
        self._random = random.Random(seed)

    def create_context(self, records: Sequence[ContextRecord]) -> tuple[list[Message], int]:
        system, units, room = self._prepare(records)
        self._random.shuffle(units)
        chosen: list[_Unit] = []
        for unit in units:
            if unit.tokens <= room:
                chosen.append(unit)
                room -= unit.tokens
        return self._render(system, chosen)


# -- helpers shared with the agent memories ------------------------------------------------


def dedupe_by_uuid(records: Sequence[ContextRecord]) -> list[ContextRecord]:
    """One context record per uuid, the best-scored one, in first-seen order."""
    best: dict[str, ContextRecord] = {}
    for context in records:
        held = best.get(context.record.uuid)
        if held is None or context.score > held.score:
            best[context.record.uuid] = context
    return list(best.values())


def chronological(records: Sequence[ContextRecord]) -> list[ContextRecord]:
    """Oldest first by record timestamp; equal timestamps keep their given order."""
    return sorted(records, key=lambda c: c.record.timestamp)


def group_units(items: list[tuple[int, ContextRecord]]) -> list[_Unit]:
    """One unit per record, except tool results, which join the unit of their call."""
    units: list[_Unit] = []
    unit_of_call: dict[str, _Unit] = {}
    for position, context in items:
        message = context.record.message
        tokens = estimate_message_tokens(message)
        if message.role == "tool":
            owner = unit_of_call.get(message.tool_call_id or "")
            if owner is None:
                logger.debug(
                    "dropping tool result %s: its call is not in context", context.record.uuid
                )
                continue
            owner.items.append((position, context))
            owner.tokens += tokens
            continue
        unit = _Unit([(position, context)], tokens)
        units.append(unit)
        for call in message.tool_calls:
            unit_of_call[call.id] = unit
    return units
