"""Flushing: durable facts go to memory before messages leave the context.

The composition root passes a ``Flush`` callback (it extracts facts and writes
them to the daily note and the facts store); this layer never imports curate/
or facts/. A ``FlushLedger`` remembers which messages were flushed, so the same
message is never flushed twice, even when it is later summarised or dropped.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from memdir.llm.base import Message

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FlushResult:
    """What a flush wrote: how many facts were saved (0 is a valid answer)."""

    facts_saved: int = 0
    note: str = ""


Flush = Callable[[Sequence[Message]], FlushResult]
"""Writes the durable facts found in the messages to memory; raises on failure."""


def fingerprint(message: Message) -> str:
    """A stable hash of everything that makes up ``message``."""
    payload = [
        message.role,
        message.content,
        [[call.id, call.name, call.arguments] for call in message.tool_calls],
        message.tool_call_id,
        message.name,
    ]
    encoded = json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


class FlushLedger:
    """The multiset of messages already flushed.

    Messages carry no ids, so they are matched by fingerprint and counted: two
    identical messages are two entries. Matching runs in list order, so the
    earlier copy of a repeated message is the flushed one.
    """

    def __init__(self) -> None:
        self._flushed: Counter[str] = Counter()

    def __len__(self) -> int:
        return self._flushed.total()

    def unflushed(self, messages: Sequence[Message]) -> list[int]:
        """Indices into ``messages`` of those not yet flushed."""
        available = Counter(self._flushed)
        pending = []
        for index, message in enumerate(messages):
            key = fingerprint(message)
            if available[key] > 0:
                available[key] -= 1
            else:
                pending.append(index)
        return pending

    def mark(self, messages: Iterable[Message]) -> None:
        """Record ``messages`` as flushed."""
        self._flushed.update(fingerprint(m) for m in messages)

    def forget(self, messages: Iterable[Message]) -> None:
        """Drop ``messages`` from the ledger once they have left the context."""
        self._flushed.subtract(fingerprint(m) for m in messages)
        self._flushed = +self._flushed  # drop counts at or below zero


@dataclass(frozen=True)
class FlushOutcome:
    """How many messages went to the flush callback and how many facts it saved."""

    flushed: int = 0
    facts_saved: int = 0
    skipped_unflushed: int = 0


def flush_messages(
    messages: Sequence[Message],
    flush: Flush | None,
    ledger: FlushLedger | None,
) -> FlushOutcome:
    """Flush those of ``messages`` the ledger has not seen; errors from ``flush`` propagate.

    System messages are never flushed (they are configuration, not conversation).
    With ``flush`` None nothing is written and the count of unflushed messages is
    returned, so the caller can say so.
    """
    candidates = [i for i, m in enumerate(messages) if m.role != "system"]
    if ledger is not None:
        pending_set = set(ledger.unflushed(messages))
        candidates = [i for i in candidates if i in pending_set]
    pending = [messages[i] for i in candidates]
    if not pending:
        return FlushOutcome()
    if flush is None:
        return FlushOutcome(skipped_unflushed=len(pending))
    result = flush(pending)
    if ledger is not None:
        ledger.mark(pending)
    logger.debug("flushed %d messages, %d facts saved", len(pending), result.facts_saved)
    return FlushOutcome(flushed=len(pending), facts_saved=result.facts_saved)
