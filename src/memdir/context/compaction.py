"""Flush-then-compact: one operation that never loses a message silently.

``compact()`` cuts the conversation after the system message at a clean point
(tool calls stay with their results), flushes the older part to memory, then
replaces it with one summary, a user message marked as reference. The cut keeps
the policy's tail unless that would leave the context above
``compact_target_ratio`` of the window (``cuts.choose_cut``), and the summary is
bounded by ``summary_max_tokens`` and a tenth of the window (``summary_budget``);
``compaction_gain`` says how much new conversation a compaction would fold into
the summary. If the flush
raises, nothing is discarded and the error propagates. The inputs are never
mutated; the ``Compaction`` holds the new list and says what happened to every
input index.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memdir.context.cuts import body_start, choose_cut
from memdir.context.flushing import Flush, FlushLedger, FlushOutcome, flush_messages
from memdir.context.policy import ContextPolicy, known_budget
from memdir.context.summary import (
    SummaryCache,
    is_summary_message,
    summarise_extractively,
    summarise_with_model,
    summary_key,
    summary_message,
)
from memdir.errors import ChatModelError, ContextLengthError
from memdir.llm.base import ChatModel, Message
from memdir.llm.tokens import estimate_message_tokens, estimate_messages_tokens

logger = logging.getLogger(__name__)

Method = Literal["none", "model", "extractive", "dropped", "truncated"]


@dataclass(frozen=True)
class Compaction:
    """The outcome of a compaction or an emergency prune.

    ``messages`` is the new list. Every index of the input list is in exactly
    one of ``kept_indices`` (carried over; content cut when also in
    ``truncated_indices``), ``summarised_indices`` (folded into the summary) or
    ``dropped_indices`` (emergency only). ``summary_index`` is where the summary
    (or the drop note) sits in ``messages``. ``flushed_count`` messages went to
    the flush callback in this step; ``unflushed_dropped`` left the context
    without ever being flushed (only when no flush callback was given).
    """

    messages: tuple[Message, ...]
    method: Method
    kept_indices: tuple[int, ...]
    summarised_indices: tuple[int, ...] = ()
    dropped_indices: tuple[int, ...] = ()
    truncated_indices: tuple[int, ...] = ()
    summary: str = ""
    summary_index: int | None = None
    flushed_count: int = 0
    facts_saved: int = 0
    unflushed_dropped: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    cache_hit: bool = False

    @property
    def changed(self) -> bool:
        """Whether the message list differs from the input."""
        return self.method != "none"

    def describe(self) -> str:
        """One line for logs."""
        replaced = len(self.summarised_indices) + len(self.dropped_indices)
        return (
            f"{self.method}: {replaced} messages replaced, {len(self.kept_indices)} kept, "
            f"{self.flushed_count} flushed, tokens {self.tokens_before:,} -> "
            f"{self.tokens_after:,}" + (" (cached summary)" if self.cache_hit else "")
        )


def unchanged(messages: Sequence[Message]) -> Compaction:
    """A compaction that changed nothing."""
    tokens = estimate_messages_tokens(messages)
    return Compaction(
        messages=tuple(messages),
        method="none",
        kept_indices=tuple(range(len(messages))),
        tokens_before=tokens,
        tokens_after=tokens,
    )


def compact(
    messages: Sequence[Message],
    *,
    model: ChatModel | None,
    flush: Flush | None,
    policy: ContextPolicy | None = None,
    cache: SummaryCache | None = None,
    ledger: FlushLedger | None = None,
) -> Compaction:
    """Flush the older turns to memory, then replace them with a summary.

    Keeps the leading system message as is and the policy's tail whole. With
    ``model`` None (or when the model fails: the summary request is too long, the
    server cannot be reached, ...) the summary is extractive, of lower quality.
    ``flush`` None means the caller knowingly compacts without writing memory (the
    count is in ``Compaction.unflushed_dropped``). Messages the ``ledger`` already
    holds are not flushed again.
    """
    policy = policy or ContextPolicy()
    start = body_start(messages)
    cut = compaction_cut(messages, policy, model)
    if cut <= start:
        return unchanged(messages)
    older = list(messages[start:cut])
    outcome = flush_messages(older, flush, ledger)  # raises before anything is discarded
    _warn_unflushed(outcome)
    summary, method, cache_hit = _summarise(older, model, policy, cache)
    note = summary_message(summary)
    new = [*messages[:start], note, *messages[cut:]]
    if ledger is not None:
        ledger.forget(older)
        ledger.mark([note])  # made from flushed messages: nothing new to flush
    compaction = Compaction(
        messages=tuple(new),
        method=method,
        kept_indices=(*range(start), *range(cut, len(messages))),
        summarised_indices=tuple(range(start, cut)),
        summary=summary,
        summary_index=start,
        flushed_count=outcome.flushed,
        facts_saved=outcome.facts_saved,
        unflushed_dropped=outcome.skipped_unflushed,
        tokens_before=estimate_messages_tokens(messages),
        tokens_after=estimate_messages_tokens(new),
        cache_hit=cache_hit,
    )
    logger.info("context compacted: %s", compaction.describe())
    return compaction


def compaction_cut(
    messages: Sequence[Message], policy: ContextPolicy, model: ChatModel | None = None
) -> int:
    """Where ``compact`` cuts: the policy's tail, giving way to the compaction target
    when the window is known."""
    budget = known_budget(policy, model)
    target = None if budget is None else int(budget * policy.compact_target_ratio)
    return choose_cut(messages, policy, target)


SUMMARY_SHARE = 0.10
MIN_SUMMARY_TOKENS = 64


def summary_budget(policy: ContextPolicy, model: ChatModel | None = None) -> int:
    """The summary's length bound: ``summary_max_tokens``, and at most a tenth of the
    window when it is known (a 1,000-token summary would fill a quarter of 4,000)."""
    window = known_budget(policy, model)
    if window is None:
        return policy.summary_max_tokens
    return min(policy.summary_max_tokens, max(MIN_SUMMARY_TOKENS, int(window * SUMMARY_SHARE)))


def compaction_gain(
    messages: Sequence[Message], policy: ContextPolicy, model: ChatModel | None = None
) -> int:
    """Tokens of conversation a compaction now would fold into the summary (an earlier
    summary does not count: it is folded again, not freed)."""
    start = body_start(messages)
    cut = compaction_cut(messages, policy, model)
    return sum(estimate_message_tokens(m) for m in messages[start:cut] if not is_summary_message(m))


def _warn_unflushed(outcome: FlushOutcome) -> None:
    if outcome.skipped_unflushed:
        logger.warning(
            "%d messages leave the context without a flush (no flush callback given); "
            "they remain only in the session transcript",
            outcome.skipped_unflushed,
        )


def _summarise(
    older: Sequence[Message],
    model: ChatModel | None,
    policy: ContextPolicy,
    cache: SummaryCache | None,
) -> tuple[str, Method, bool]:
    budget = summary_budget(policy, model)
    if model is None:
        return summarise_extractively(older, budget), "extractive", False
    key = summary_key(older, model, budget)
    if cache is not None:
        cached = cache.get(key)
        if cached is not None:
            return cached, "model", True
    try:
        summary = summarise_with_model(older, model, budget)
    except ContextLengthError as exc:
        logger.warning(
            "the summary request for %d messages is too long for %s/%s (%s); "
            "using an extractive summary instead",
            len(older),
            model.provider,
            model.model,
            exc,
        )
        return summarise_extractively(older, budget), "extractive", False
    except ChatModelError as exc:  # down, timing out, refusing: the turn goes on
        logger.warning(
            "%s/%s failed to summarise (%s); using an extractive summary instead",
            model.provider,
            model.model,
            exc,
        )
        return summarise_extractively(older, budget), "extractive", False
    if not summary:
        logger.warning(
            "%s/%s returned an empty summary; using an extractive summary instead",
            model.provider,
            model.model,
        )
        return summarise_extractively(older, budget), "extractive", False
    if cache is not None:
        cache.put(key, summary)
    return summary, "model", False
