"""The driver the chat loop calls before every model request.

``prepare_context()`` measures the conversation and applies the step its level
calls for: at *flush* it flushes the messages not flushed before; at *compact*
and *warn* it flushes then compacts, when the compaction would fold at least
``compact_min_gain_ratio`` of the window into the summary (else it only
flushes: a compaction that frees little would run again on the next turn); at
*prune* it compacts whatever the gain, and also hard-prunes when the compacted
list is still over the prune threshold. It returns the new list and
the events (for logging or a UI). ``ContextWindow`` holds the model, the flush
callback, the policy, the summary cache and the flush ledger, so the chat loop
passes only messages::

    window = ContextWindow(model=model, flush=memory_flush)
    messages, events = window.prepare(messages)
    try:
        completion = model.complete(messages)
    except ContextLengthError as exc:
        window.learn(str(exc), messages)  # the window the model really accepts
        messages = list(window.recover(messages).messages)  # no model call; retry
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memdir.context.compaction import Compaction, compact, compaction_gain
from memdir.context.flushing import Flush, FlushLedger, flush_messages
from memdir.context.limits import learned_budget
from memdir.context.policy import (
    ContextLevel,
    ContextPolicy,
    ContextStatus,
    check_context,
    input_budget,
)
from memdir.context.pruning import emergency_compact
from memdir.context.summary import SummaryCache
from memdir.llm.base import ChatModel, Message
from memdir.llm.tokens import estimate_messages_tokens

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
    if status.level == ContextLevel.FLUSH or not _worth_compacting(messages, status, policy, model):
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


def _worth_compacting(
    messages: Sequence[Message],
    status: ContextStatus,
    policy: ContextPolicy,
    model: ChatModel | None,
) -> bool:
    """At the prune level always; below it, when the summary would take in enough."""
    if status.level >= ContextLevel.PRUNE:
        return True
    gain = compaction_gain(messages, policy, model)
    if gain >= policy.compact_min_gain_ratio * status.budget and gain > 0:
        return True
    logger.info(
        "compaction deferred: it would fold only %d tokens into the summary (%s)",
        gain,
        status.describe(),
    )
    return False


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

    def learn(self, error: str, refused: Sequence[Message]) -> int | None:
        """Take the window a context-length ``error`` reveals for the ``refused`` request
        (``limits.learned_budget``): the new, smaller budget, or None when it says none."""
        budget = input_budget(self.policy, self.model)
        learned = learned_budget(error, estimate_messages_tokens(refused), budget)
        if learned is not None:
            logger.warning(
                "the model refused %d estimated tokens; its window is taken as %d tokens, not %d",
                estimate_messages_tokens(refused),
                learned,
                budget,
            )
            self.policy = dataclasses.replace(self.policy, max_input_tokens=learned)
        return learned

    def recover(self, messages: Sequence[Message]) -> Compaction:
        """Emergency compaction after a ``ContextLengthError``: no model call."""
        return emergency_compact(
            messages, self.policy, flush=self.flush, model=self.model, ledger=self.ledger
        )
