"""The driver the chat loop calls before every model request.

``prepare_context()`` measures the conversation and applies the step its level
calls for: at *flush* it flushes the messages not flushed before; at *compact*
and *warn* it flushes then compacts; at *prune* it also hard-prunes when the
compacted list is still over the prune threshold. It returns the new list and
the events (for logging or a UI). ``ContextWindow`` holds the model, the flush
callback, the policy, the summary cache and the flush ledger, so the chat loop
passes only messages::

    window = ContextWindow(model=model, flush=memory_flush)
    messages, events = window.prepare(messages)
    try:
        completion = model.complete(messages)
    except ContextLengthError:
        messages = list(window.recover(messages).messages)  # no model call; retry
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memdir.context.compaction import Compaction, compact
from memdir.context.flushing import Flush, FlushLedger, flush_messages
from memdir.context.policy import ContextLevel, ContextPolicy, ContextStatus, check_context
from memdir.context.pruning import emergency_compact
from memdir.context.summary import SummaryCache
from memdir.llm.base import ChatModel, Message

logger = logging.getLogger(__name__)

EventKind = Literal["flushed", "compacted", "warning", "pruned"]


@dataclass(frozen=True)
class ContextEvent:
    """Something ``prepare_context`` did or noticed, with the status it saw."""

    kind: EventKind
    text: str
    status: ContextStatus
    compaction: Compaction | None = None
    flushed: int = 0


def prepare_context(
    messages: Sequence[Message],
    *,
    model: ChatModel | None,
    flush: Flush | None,
    ledger: FlushLedger,
    policy: ContextPolicy | None = None,
    cache: SummaryCache | None = None,
) -> tuple[list[Message], list[ContextEvent]]:
    """Apply the step the context level calls for; return the messages and the events.

    Pass the same ``ledger`` on every call of a conversation: it is how a flush
    happens once per message. An error from ``flush`` propagates with nothing
    discarded.
    """
    policy = policy or ContextPolicy()
    status = check_context(messages, policy, model=model)
    events: list[ContextEvent] = []
    if status.level >= ContextLevel.WARN:
        logger.warning("context window nearly full: %s", status.describe())
        events.append(ContextEvent("warning", f"context {status.describe()}", status))
    if status.level == ContextLevel.OK:
        return list(messages), events
    if status.level == ContextLevel.FLUSH:
        outcome = flush_messages(messages, flush, ledger)
        if outcome.flushed:
            text = f"flushed {outcome.flushed} messages ({outcome.facts_saved} facts saved)"
            events.append(ContextEvent("flushed", text, status, flushed=outcome.flushed))
        return list(messages), events
    compaction = compact(
        messages, model=model, flush=flush, policy=policy, cache=cache, ledger=ledger
    )
    current = list(compaction.messages)
    after = check_context(current, policy, model=model)
    if compaction.changed:
        events.append(
            ContextEvent(
                "compacted",
                f"compacted ({compaction.describe()}); now {after.describe()}",
                after,
                compaction=compaction,
                flushed=compaction.flushed_count,
            )
        )
    if after.level >= ContextLevel.PRUNE:
        pruned = emergency_compact(current, policy, flush=flush, model=model, ledger=ledger)
        current = list(pruned.messages)
        final = check_context(current, policy, model=model)
        events.append(
            ContextEvent(
                "pruned",
                f"hard-pruned ({pruned.describe()}); now {final.describe()}",
                final,
                compaction=pruned,
                flushed=pruned.flushed_count,
            )
        )
    return current, events


class ContextWindow:
    """One conversation's context state: model, flush callback, policy, cache, ledger."""

    def __init__(
        self,
        *,
        model: ChatModel | None,
        flush: Flush | None,
        policy: ContextPolicy | None = None,
        cache: SummaryCache | None = None,
        ledger: FlushLedger | None = None,
    ) -> None:
        self.model = model
        self.flush = flush
        self.policy = policy or ContextPolicy()
        self.cache = cache if cache is not None else SummaryCache()
        self.ledger = ledger if ledger is not None else FlushLedger()

    def check(self, messages: Sequence[Message]) -> ContextStatus:
        """The level and numbers for ``messages``."""
        return check_context(messages, self.policy, model=self.model)

    def prepare(self, messages: Sequence[Message]) -> tuple[list[Message], list[ContextEvent]]:
        """``prepare_context`` with this window's state."""
        return prepare_context(
            messages,
            model=self.model,
            flush=self.flush,
            ledger=self.ledger,
            policy=self.policy,
            cache=self.cache,
        )

    def compact(self, messages: Sequence[Message]) -> Compaction:
        """Flush-then-compact now, whatever the level (e.g. a ``/compact`` command)."""
        return compact(
            messages,
            model=self.model,
            flush=self.flush,
            policy=self.policy,
            cache=self.cache,
            ledger=self.ledger,
        )

    def recover(self, messages: Sequence[Message]) -> Compaction:
        """Emergency compaction after a ``ContextLengthError``: no model call."""
        return emergency_compact(
            messages, self.policy, flush=self.flush, model=self.model, ledger=self.ledger
        )
