"""Where a message list may be cut in two.

Compaction and pruning replace a prefix of the conversation (after the system
message) and keep the rest. A cut is *clean* when no tool call sits on one side
and one of its results on the other: an assistant message with ``tool_calls``
and the ``tool`` messages answering it always stay together.
"""

from __future__ import annotations

from collections.abc import Sequence

from memdir.context.policy import ContextPolicy
from memdir.llm.base import Message
from memdir.llm.tokens import estimate_message_tokens, estimate_messages_tokens


def body_start(messages: Sequence[Message]) -> int:
    """Index of the first message after a leading system message (kept as is)."""
    return 1 if messages and messages[0].role == "system" else 0


def clean_cuts(messages: Sequence[Message]) -> list[bool]:
    """For each cut position 0..len, whether cutting there keeps every tool pair together."""
    positions: dict[str, list[int]] = {}
    for index, message in enumerate(messages):
        for call in message.tool_calls:
            positions.setdefault(call.id, []).append(index)
        if message.role == "tool" and message.tool_call_id is not None:
            positions.setdefault(message.tool_call_id, []).append(index)
    clean = [True] * (len(messages) + 1)
    for spots in positions.values():
        for cut in range(min(spots) + 1, max(spots) + 1):
            clean[cut] = False
    return clean


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Clean cut positions at the start of each user turn, oldest first."""
    start = body_start(messages)
    clean = clean_cuts(messages)
    return [
        index
        for index in range(start, len(messages))
        if messages[index].role == "user" and clean[index]
    ]


def wanted_tail_start(messages: Sequence[Message], policy: ContextPolicy) -> int:
    """Where the tail kept whole would start if tool pairs did not matter."""
    start = body_start(messages)
    if policy.preserve_recent_pairs is not None:
        users = [i for i in range(start, len(messages)) if messages[i].role == "user"]
        if len(users) < policy.preserve_recent_pairs:
            return start
        return users[-policy.preserve_recent_pairs]
    return max(start, len(messages) - policy.preserve_recent_messages)


def choose_cut(
    messages: Sequence[Message], policy: ContextPolicy, max_kept_tokens: int | None = None
) -> int:
    """The clean cut that summarises the most while keeping the policy's tail.

    The current turn's user message is never summarised (inside a summary marked
    as reference it would stop reading as the request to answer), so the cut
    goes no later than it. The cut moves earlier (keeping more) when the wanted
    one would split a tool call from its results; when no earlier cut is clean it
    moves later, up to that limit. With ``max_kept_tokens``, a tail that would
    leave the head and the tail over that many tokens gives way: the cut moves to
    the first later clean cut where they fit, at most to the current turn. Returns
    ``body_start`` when nothing can be summarised.
    """
    start = body_start(messages)
    limit = _last_user_index(messages, start)
    wanted = min(wanted_tail_start(messages, policy), limit)
    clean = clean_cuts(messages)
    cut = start if wanted <= start else _clean_near(clean, wanted, start, limit)
    if max_kept_tokens is None:
        return cut
    return _fit_tail(messages, clean, cut, limit, max_kept_tokens)


def _clean_near(clean: Sequence[bool], wanted: int, start: int, limit: int) -> int:
    for cut in range(wanted, start, -1):
        if clean[cut]:
            return cut
    for cut in range(wanted + 1, limit + 1):
        if clean[cut]:
            return cut
    return start


def _fit_tail(
    messages: Sequence[Message], clean: Sequence[bool], cut: int, limit: int, max_tokens: int
) -> int:
    """``cut`` when the head and its tail fit ``max_tokens``; else the first later clean
    cut up to ``limit`` where they do (the last clean one when none does)."""
    head = estimate_messages_tokens(messages[: body_start(messages)])
    tail = sum(estimate_message_tokens(m) for m in messages[cut:])
    best = cut
    for position in range(cut, limit + 1):
        if position > cut:
            tail -= estimate_message_tokens(messages[position - 1])
            if not clean[position]:
                continue
            best = position
        if head + tail <= max_tokens:
            return position
    return best


def _last_user_index(messages: Sequence[Message], start: int) -> int:
    for index in range(len(messages) - 1, start - 1, -1):
        if messages[index].role == "user":
            return index
    return len(messages)
