"""Levels, the policy, and the prepare_context driver."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memdir.context import (
    ContextLevel,
    ContextPolicy,
    ContextWindow,
    FlushLedger,
    FlushResult,
    check_context,
    input_budget,
    is_summary_message,
    prepare_context,
)
from memdir.errors import ConfigError
from memdir.llm import Message, Role, ScriptedChatModel, estimate_messages_tokens

BUDGET = 1000


def sized(tokens: int) -> list[Message]:
    """Alternating user/assistant messages that estimate to exactly ``tokens``."""
    messages: list[Message] = []
    while estimate_messages_tokens(messages) + 45 < tokens:
        role: Role = "user" if len(messages) % 2 == 0 else "assistant"
        messages.append(Message(role, f"{role} message {len(messages)} " + "word " * 20))
    filler = "lorem ipsum dolor sit amet " * (tokens // 4 + 10)
    low, high = 0, len(filler)  # the shortest filler prefix that reaches the target
    while low < high:
        middle = (low + high) // 2
        if estimate_messages_tokens([*messages, Message("user", filler[:middle])]) >= tokens:
            high = middle
        else:
            low = middle + 1
    messages.append(Message("user", filler[:low]))
    assert estimate_messages_tokens(messages) == tokens
    return messages


class Recorder:
    def __init__(self) -> None:
        self.batches: list[list[Message]] = []

    def __call__(self, messages: Sequence[Message]) -> FlushResult:
        self.batches.append(list(messages))
        return FlushResult(facts_saved=len(messages))


@pytest.mark.parametrize(
    ("tokens", "level"),
    [
        (599, ContextLevel.OK),
        (600, ContextLevel.FLUSH),
        (699, ContextLevel.FLUSH),
        (700, ContextLevel.COMPACT),
        (800, ContextLevel.WARN),
        (900, ContextLevel.PRUNE),
        (1500, ContextLevel.PRUNE),
    ],
)
def test_levels_follow_the_thresholds(tokens: int, level: ContextLevel) -> None:
    status = check_context(sized(tokens), ContextPolicy(max_input_tokens=BUDGET))
    assert status.level is level
    assert status.tokens == tokens
    assert status.budget == BUDGET
    assert status.ratio == pytest.approx(tokens / BUDGET)
    assert status.level.label in status.describe()


def test_budget_comes_from_the_model_unless_overridden() -> None:
    model = ScriptedChatModel(context_window=5000)
    assert input_budget(ContextPolicy(), model) == 5000
    assert input_budget(ContextPolicy(max_input_tokens=1234), model) == 1234
    with pytest.raises(ConfigError, match="max_input_tokens"):
        input_budget(ContextPolicy())


@pytest.mark.parametrize(
    "options",
    [
        {"flush_ratio": 0.0},
        {"prune_ratio": 1.5},
        {"flush_ratio": 0.8, "compact_trigger_ratio": 0.7},
        {"max_input_tokens": 0},
        {"summary_max_tokens": -1},
        {"preserve_recent_messages": -1},
        {"preserve_recent_pairs": 0},
    ],
)
def test_invalid_policies_are_rejected(options: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match="context"):
        ContextPolicy(**options)  # type: ignore[arg-type]


def test_ok_level_does_nothing() -> None:
    flush = Recorder()
    messages = sized(500)
    result, events = prepare_context(
        messages,
        model=None,
        flush=flush,
        ledger=FlushLedger(),
        policy=ContextPolicy(max_input_tokens=BUDGET),
    )
    assert result == messages
    assert events == []
    assert flush.batches == []


def test_flush_level_flushes_each_message_once() -> None:
    flush = Recorder()
    window = ContextWindow(model=None, flush=flush, policy=ContextPolicy(max_input_tokens=BUDGET))
    messages = sized(620)

    first, events = window.prepare(messages)
    again, no_events = window.prepare(messages)
    grown = [*messages, Message("assistant", "a short reply")]
    _, more_events = window.prepare(grown)

    assert first == messages == again
    assert [e.kind for e in events] == ["flushed"]
    assert events[0].flushed == len(messages)
    assert no_events == []
    assert [e.kind for e in more_events] == ["flushed"]
    assert flush.batches == [messages, [grown[-1]]]


def test_compact_level_flushes_then_compacts() -> None:
    model = ScriptedChatModel(["the summary"], context_window=BUDGET)
    flush = Recorder()
    window = ContextWindow(model=model, flush=flush)
    messages = sized(750)

    result, events = window.prepare(messages)

    assert [e.kind for e in events] == ["compacted"]
    compaction = events[0].compaction
    assert compaction is not None
    assert flush.batches == [[messages[i] for i in compaction.summarised_indices]]
    assert is_summary_message(result[0])
    assert result[1:] == messages[-4:]
    assert events[0].status.level is ContextLevel.OK


def test_warn_level_warns_and_compacts() -> None:
    model = ScriptedChatModel(["the summary"], context_window=BUDGET)
    _, events = ContextWindow(model=model, flush=Recorder()).prepare(sized(850))
    assert [e.kind for e in events] == ["warning", "compacted"]


def test_prune_level_hard_prunes_when_compaction_is_not_enough() -> None:
    model = ScriptedChatModel(["the summary"], context_window=BUDGET)
    flush = Recorder()
    messages = [*sized(300), Message("assistant", "y" * 4000)]  # the kept tail alone is over
    window = ContextWindow(model=model, flush=flush)

    result, events = window.prepare(messages)

    assert [e.kind for e in events] == ["warning", "compacted", "pruned"]
    assert estimate_messages_tokens(result) <= BUDGET * 0.5
    assert events[-1].status.tokens == estimate_messages_tokens(result)
    flushed = [m for batch in flush.batches for m in batch]
    assert len(flushed) == len(set(map(id, flushed)))  # nothing flushed twice
    assert len(model.calls) == 1


def test_recover_runs_emergency_compaction_without_the_model() -> None:
    model = ScriptedChatModel([], context_window=BUDGET)
    flush = Recorder()
    compaction = ContextWindow(model=model, flush=flush).recover(sized(990))
    assert compaction.method == "dropped"
    assert model.calls == []
    assert compaction.tokens_after <= BUDGET * 0.5


def test_a_failing_flush_in_prepare_discards_nothing() -> None:
    def broken(messages: Sequence[Message]) -> FlushResult:
        raise ConfigError("facts store not configured; run memdir init")

    model = ScriptedChatModel([], context_window=BUDGET)
    ledger = FlushLedger()
    messages = sized(750)
    before = list(messages)
    with pytest.raises(ConfigError, match="memdir init"):
        prepare_context(messages, model=model, flush=broken, ledger=ledger)
    assert messages == before
    assert model.calls == []
    assert len(ledger) == 0
