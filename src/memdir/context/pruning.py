"""Hard pruning without any model call.

``trim_to_fit()`` drops the oldest whole turns (tool pairs stay together) until
the list fits, and always keeps the last turn: the last user message and what
follows. If that turn alone is over budget, the longest contents are shortened
around a marker instead of dropped. It is a pure function and records nothing.

``emergency_compact()`` is what to run after a ``ContextLengthError``: the same
drop, but flushed first when a flush callback is given, with a note in place of
the dropped turns and a ``Compaction`` that lists them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memdir.context.compaction import Compaction, unchanged
from memdir.context.cuts import body_start, turn_starts
from memdir.context.flushing import Flush, FlushLedger, flush_messages
from memdir.context.policy import ContextPolicy, input_budget
from memdir.context.summary import SUMMARY_MARKER, summary_message
from memdir.llm.base import ChatModel, Message
from memdir.llm.tokens import estimate_message_tokens, estimate_messages_tokens, estimate_tokens

logger = logging.getLogger(__name__)

CONTENT_MARKER = "\n[...truncated to fit the context window...]\n"
MIN_CONTENT_TOKENS = 32


def trim_to_fit(messages: Sequence[Message], max_tokens: int) -> list[Message]:
    """The newest whole turns of ``messages`` that fit ``max_tokens``, system message first.

    The last turn is always kept; over budget, its longest contents are shortened.
    """
    cut = _fitting_cut(messages, max_tokens, reserved=0)
    start = body_start(messages)
    trimmed = [*messages[:start], *messages[cut:]]
    shortened, _ = shorten_to_fit(trimmed, max_tokens, protect=start)
    return shortened


def emergency_compact(
    messages: Sequence[Message],
    policy: ContextPolicy | None = None,
    *,
    flush: Flush | None,
    model: ChatModel | None = None,
    ledger: FlushLedger | None = None,
    target_tokens: int | None = None,
) -> Compaction:
    """Drop the oldest turns, without calling any model, to ``target_tokens``.

    The target defaults to ``prune_target_ratio`` of the budget (``model`` is
    only asked for its ``context_window``). Whole turns are dropped down to the
    target, then the longest contents left are shortened to it, except the current
    user message: that one is shortened only as far as the prune level of the
    budget requires (with an explicit ``target_tokens``, as far as that target).
    ``flush`` must be given explicitly: a callback flushes the dropped messages the
    ``ledger`` has not seen before they go (an error propagates and nothing is
    dropped); ``None`` drops them unflushed, logs a warning and counts them in
    ``unflushed_dropped``.
    """
    policy = policy or ContextPolicy()
    budget = input_budget(policy, model) if target_tokens is None else target_tokens
    target = target_tokens or int(budget * policy.prune_target_ratio)
    room = target if target_tokens is not None else max(target, int(budget * policy.prune_ratio))
    start = body_start(messages)
    note_cost = estimate_messages_tokens([_drop_note(0, flushed=True)])
    cut = _fitting_cut(messages, target, reserved=note_cost)
    dropped = list(messages[start:cut])
    outcome = flush_messages(dropped, flush, ledger)  # raises before anything is dropped
    if outcome.skipped_unflushed:
        logger.warning(
            "emergency compaction drops %d messages that were never flushed to memory "
            "(no flush callback); they remain only in the session transcript",
            outcome.skipped_unflushed,
        )
    head = list(messages[:start])
    note = [_drop_note(len(dropped), flushed=not outcome.skipped_unflushed)] if dropped else []
    kept = [*head, *note, *messages[cut:]]
    current = _last_user(kept, start + len(note))
    shortened, truncated = shorten_to_fit(kept, target, protect=start + len(note), keep=current)
    if current is not None and estimate_messages_tokens(shortened) > room:
        shortened, more = shorten_to_fit(shortened, room, protect=start + len(note))
        truncated = sorted({*truncated, *more})
    if not dropped and not truncated:
        return unchanged(messages)
    if ledger is not None:
        _update_ledger(ledger, dropped=dropped, note=note, before=kept, after=shortened)
    offset = cut - start - len(note)  # output position -> input index, past the note
    result = Compaction(
        messages=tuple(shortened),
        method="dropped" if dropped else "truncated",
        kept_indices=(*range(start), *range(cut, len(messages))),
        dropped_indices=tuple(range(start, cut)),
        truncated_indices=tuple(i + offset for i in truncated),
        summary=note[0].content.removeprefix(SUMMARY_MARKER).strip() if note else "",
        summary_index=start if note else None,
        flushed_count=outcome.flushed,
        facts_saved=outcome.facts_saved,
        unflushed_dropped=outcome.skipped_unflushed,
        tokens_before=estimate_messages_tokens(messages),
        tokens_after=estimate_messages_tokens(shortened),
    )
    logger.warning("emergency compaction: %s", result.describe())
    return result


def _last_user(messages: Sequence[Message], start: int) -> int | None:
    return next(
        (i for i in range(len(messages) - 1, start - 1, -1) if messages[i].role == "user"), None
    )


def _update_ledger(
    ledger: FlushLedger,
    *,
    dropped: Sequence[Message],
    note: Sequence[Message],
    before: Sequence[Message],
    after: Sequence[Message],
) -> None:
    """Forget the dropped messages; a shortened message inherits its original's flush."""
    pending = set(ledger.unflushed(before))
    ledger.forget(dropped)
    ledger.mark(note)
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        if old != new and index not in pending:
            ledger.forget([old])
            ledger.mark([new])


def _drop_note(count: int, *, flushed: bool) -> Message:
    where = (
        "their durable facts were saved to memory first; search memory for details"
        if flushed
        else "they were NOT saved to memory; the session transcript still has them"
    )
    return summary_message(
        f"{count} earlier messages were dropped to fit the context window, without a "
        f"summary; {where}."
    )


def _fitting_cut(messages: Sequence[Message], max_tokens: int, *, reserved: int) -> int:
    """The earliest clean turn start whose suffix fits; else the last turn's start."""
    start = body_start(messages)
    if estimate_messages_tokens(messages) + reserved <= max_tokens:
        return start
    candidates = turn_starts(messages)
    if not candidates:
        return start
    sizes = [estimate_message_tokens(m) for m in messages]
    head = estimate_messages_tokens(messages[:start])
    for cut in candidates:
        if head + sum(sizes[cut:]) + reserved <= max_tokens:
            return cut
    return candidates[-1]


def shorten_to_fit(
    messages: Sequence[Message], max_tokens: int, *, protect: int, keep: int | None = None
) -> tuple[list[Message], list[int]]:
    """Shorten the longest contents (from index ``protect`` on, ``keep`` left whole)
    until the list fits.

    Returns the new list and the indices whose content was cut. Gives up, with a
    warning, when every content is down to ``MIN_CONTENT_TOKENS``.
    """
    result = list(messages)
    truncated: set[int] = set()
    while (excess := estimate_messages_tokens(result) - max_tokens) > 0:
        sizes = {
            i: estimate_tokens(result[i].content)
            for i in range(protect, len(result))
            if i != keep and estimate_tokens(result[i].content) > MIN_CONTENT_TOKENS
        }
        if not sizes and keep is not None:
            break  # what is left over is the kept message's: the caller decides
        if not sizes:
            logger.warning(
                "messages still need %d tokens more than the budget of %d after trimming; "
                "nothing left to shorten",
                excess,
                max_tokens,
            )
            break
        index = max(sizes, key=lambda i: sizes[i])
        allowed = max(MIN_CONTENT_TOKENS, sizes[index] - excess)
        message = result[index]
        result[index] = Message(
            message.role,
            shorten_text(message.content, allowed),
            tool_calls=message.tool_calls,
            tool_call_id=message.tool_call_id,
            name=message.name,
        )
        truncated.add(index)
    return result, sorted(truncated)


def shorten_text(text: str, max_tokens: int) -> str:
    """``text`` cut to ``max_tokens``: its first 70% and last 20% around a marker."""
    if estimate_tokens(text) <= max_tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest kept length that fits with the marker
        middle = (low + high + 1) // 2
        if estimate_tokens(_head_and_tail(text, middle)) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return _head_and_tail(text, low)


def _head_and_tail(text: str, keep: int) -> str:
    head = keep * 7 // 9
    tail = keep - head
    return text[:head] + CONTENT_MARKER + (text[len(text) - tail :] if tail else "")
