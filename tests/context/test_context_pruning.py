"""Emergency compaction and trim_to_fit: no model call, tool pairs intact, last turn kept."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memdir.context import ContextPolicy, FlushLedger, FlushResult, emergency_compact, trim_to_fit
from memdir.context.pruning import CONTENT_MARKER
from memdir.errors import ConfigError, EmbeddingError
from memdir.llm import Message, ScriptedChatModel, ToolCall, estimate_messages_tokens

SYSTEM = Message("system", "You are a helpful agent. " * 5)
FILLER = "lorem ipsum dolor sit amet " * 20  # ~135 tokens


def long_conversation(turns: int) -> list[Message]:
    messages = [SYSTEM]
    for n in range(turns):
        call = ToolCall(f"call-{n}", "memory_search", {"query": f"q{n}"})
        messages += [
            Message("user", f"question {n} {FILLER}"),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", f"result {n} {FILLER}", tool_call_id=f"call-{n}"),
            Message("assistant", f"answer {n}"),
        ]
    return messages


def assert_tool_pairs_intact(messages: Sequence[Message]) -> None:
    called = {c.id for m in messages for c in m.tool_calls}
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    assert called == answered


class Recorder:
    def __init__(self, *, fail: bool = False) -> None:
        self.flushed: list[Message] = []
        self.fail = fail

    def __call__(self, messages: Sequence[Message]) -> FlushResult:
        if self.fail:
            raise EmbeddingError("embedder unavailable")
        self.flushed += messages
        return FlushResult(facts_saved=1)


def test_emergency_compaction_makes_no_model_call_and_fits_the_target() -> None:
    model = ScriptedChatModel([], context_window=2000)  # any call would raise
    flush = Recorder()
    messages = long_conversation(8)
    assert estimate_messages_tokens(messages) > 2000

    result = emergency_compact(messages, ContextPolicy(), flush=flush, model=model)

    assert model.calls == []
    assert result.method == "dropped"
    assert result.tokens_after <= 1000  # prune_target_ratio 0.5 of the 2000 window
    assert result.messages[0] == SYSTEM
    note = result.messages[1]
    assert note.role == "user"
    assert "dropped" in note.content
    assert "saved to memory first" in note.content
    assert note.content.endswith(result.summary)
    assert result.summary.startswith(f"{len(result.dropped_indices)} earlier messages")
    assert list(result.messages[2:]) == messages[result.kept_indices[1] :]
    assert result.messages[2].role == "user"
    assert_tool_pairs_intact(result.messages)
    dropped = [messages[i] for i in result.dropped_indices]
    assert flush.flushed == dropped
    assert result.flushed_count == len(dropped)
    assert sorted((*result.kept_indices, *result.dropped_indices)) == list(range(len(messages)))


def test_emergency_compaction_without_flush_says_so() -> None:
    result = emergency_compact(
        long_conversation(6), ContextPolicy(max_input_tokens=1500), flush=None
    )
    assert result.unflushed_dropped == len(result.dropped_indices) > 0
    assert result.flushed_count == 0
    assert "NOT saved to memory" in result.messages[1].content


def test_emergency_compaction_flush_failure_drops_nothing() -> None:
    messages = long_conversation(6)
    ledger = FlushLedger()
    with pytest.raises(EmbeddingError):
        emergency_compact(
            messages, ContextPolicy(max_input_tokens=1500), flush=Recorder(fail=True), ledger=ledger
        )
    assert len(ledger) == 0


def test_emergency_compaction_skips_messages_the_ledger_already_flushed() -> None:
    messages = long_conversation(6)
    ledger = FlushLedger()
    ledger.mark(messages[1:9])
    flush = Recorder()
    result = emergency_compact(
        messages, ContextPolicy(max_input_tokens=1500), flush=flush, ledger=ledger
    )
    assert flush.flushed == [messages[i] for i in result.dropped_indices if i >= 9]


def test_emergency_compaction_needs_a_window() -> None:
    with pytest.raises(ConfigError, match="max_input_tokens"):
        emergency_compact(long_conversation(2), ContextPolicy(), flush=None)


def test_emergency_compaction_of_a_fitting_list_changes_nothing() -> None:
    messages = long_conversation(1)
    result = emergency_compact(messages, ContextPolicy(max_input_tokens=100_000), flush=None)
    assert not result.changed
    assert list(result.messages) == messages


def test_trim_to_fit_drops_whole_old_turns() -> None:
    messages = long_conversation(6)
    trimmed = trim_to_fit(messages, 900)
    assert estimate_messages_tokens(trimmed) <= 900
    assert trimmed[0] == SYSTEM
    assert trimmed[1].role == "user"
    assert trimmed[-4:] == messages[-4:]
    assert_tool_pairs_intact(trimmed)
    assert trimmed == [SYSTEM, *messages[len(messages) - len(trimmed) + 1 :]]


def test_trim_to_fit_keeps_the_last_turn_even_over_budget_by_truncating() -> None:
    messages = long_conversation(3)
    huge = Message("user", "Please read this: " + "x" * 20_000 + " END OF QUESTION")
    messages.append(huge)
    trimmed = trim_to_fit(messages, 400)
    assert trimmed[0] == SYSTEM
    assert len(trimmed) == 2
    kept = trimmed[1]
    assert kept.role == "user"
    assert CONTENT_MARKER in kept.content
    assert kept.content.startswith("Please read this: ")
    assert kept.content.endswith("END OF QUESTION")
    assert estimate_messages_tokens(trimmed) <= 400


def test_trim_to_fit_keeps_the_last_turn_with_its_tool_results() -> None:
    messages = long_conversation(4)
    trimmed = trim_to_fit(messages, 50)  # below even the last turn
    assert [m.role for m in trimmed] == ["system", "user", "assistant", "tool", "assistant"]
    assert trimmed[2].tool_calls == messages[-3].tool_calls
    assert trimmed[3].tool_call_id == "call-3"


def test_trim_to_fit_returns_a_fitting_list_unchanged() -> None:
    messages = long_conversation(2)
    assert trim_to_fit(messages, 100_000) == messages


def test_emergency_truncation_reports_input_indices() -> None:
    messages = [*long_conversation(2), Message("user", "y" * 40_000)]
    result = emergency_compact(messages, ContextPolicy(max_input_tokens=2000), flush=None)
    assert result.truncated_indices == (len(messages) - 1,)
    assert CONTENT_MARKER in result.messages[-1].content
