"""Flush-then-compact with the scripted chat model."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memdir.context import (
    SUMMARY_MARKER,
    ContextPolicy,
    FlushLedger,
    FlushResult,
    SummaryCache,
    compact,
)
from memdir.context.summary import EXTRACTIVE_NOTE
from memdir.errors import ChatModelError, ContextLengthError, StoreError
from memdir.llm import Message, ScriptedChatModel, ToolCall, estimate_tokens

SYSTEM = Message("system", "You are a helpful agent.")


def conversation(turns: int) -> list[Message]:
    messages = [SYSTEM]
    for n in range(turns):
        messages.append(Message("user", f"Question {n}. We decided to use plan {n}."))
        messages.append(Message("assistant", f"Answer {n}. Noted plan {n}."))
    return messages


class Recorder:
    """A flush callback that remembers what it was given (and can fail)."""

    def __init__(self, *, fail: bool = False, model: ScriptedChatModel | None = None) -> None:
        self.batches: list[list[Message]] = []
        self.fail = fail
        self.model = model
        self.model_calls_at_flush: list[int] = []

    def __call__(self, messages: Sequence[Message]) -> FlushResult:
        if self.model is not None:
            self.model_calls_at_flush.append(len(self.model.calls))
        if self.fail:
            raise StoreError("facts store is locked; retry")
        self.batches.append(list(messages))
        return FlushResult(facts_saved=len(messages))

    @property
    def flushed(self) -> list[Message]:
        return [m for batch in self.batches for m in batch]


def test_compact_flushes_first_then_summarises_into_a_user_message() -> None:
    model = ScriptedChatModel(["Plans 0-3 were decided."])
    flush = Recorder(model=model)
    messages = conversation(6)  # system + 12

    result = compact(messages, model=model, flush=flush, policy=ContextPolicy())

    assert flush.model_calls_at_flush == [0]  # flushed before the model was asked
    assert flush.flushed == messages[1:9]
    assert result.method == "model"
    assert result.messages[0] == SYSTEM
    summary = result.messages[1]
    assert summary.role == "user"
    assert summary.content == f"{SUMMARY_MARKER}\nPlans 0-3 were decided."
    assert list(result.messages[2:]) == messages[-4:]
    assert result.summarised_indices == tuple(range(1, 9))
    assert result.kept_indices == (0, 9, 10, 11, 12)
    assert result.flushed_count == 8
    assert result.facts_saved == 8
    assert result.summary_index == 1
    assert result.tokens_after < result.tokens_before
    assert not result.cache_hit


def test_the_summary_request_asks_for_a_faithful_bounded_summary() -> None:
    model = ScriptedChatModel(["summary"])
    compact(
        conversation(6), model=model, flush=Recorder(), policy=ContextPolicy(summary_max_tokens=77)
    )

    (call,) = model.calls
    assert call.max_tokens == 77
    instructions = call.messages[0].content
    for word in ("decisions", "facts", "open tasks", "names", "dates", "77"):
        assert word in instructions
    assert "Question 0. We decided to use plan 0." in call.messages[1].content
    assert "Question 5" not in call.messages[1].content  # the kept tail is not summarised


def test_a_long_model_summary_is_cut_to_the_budget() -> None:
    model = ScriptedChatModel(["word " * 2000])
    result = compact(
        conversation(6), model=model, flush=Recorder(), policy=ContextPolicy(summary_max_tokens=50)
    )
    assert estimate_tokens(result.summary) <= 50
    assert result.summary.endswith("[...summary truncated...]")


def test_flush_failure_discards_nothing_and_propagates() -> None:
    model = ScriptedChatModel(["never used"])
    messages = conversation(6)
    before = list(messages)
    ledger = FlushLedger()

    with pytest.raises(StoreError, match="locked"):
        compact(messages, model=model, flush=Recorder(fail=True), ledger=ledger)

    assert messages == before
    assert model.calls == []
    assert len(ledger) == 0


def test_cut_moves_earlier_so_a_tool_call_stays_with_its_results() -> None:
    call = ToolCall("c1", "memory_search", {"query": "plans"})
    messages = [
        SYSTEM,
        Message("user", "old question"),
        Message("assistant", "old answer"),
        Message("user", "find my plans"),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", "plan A", tool_call_id="c1"),
        Message("assistant", "You have plan A."),
        Message("user", "thanks"),
    ]
    result = compact(messages, model=ScriptedChatModel(["s"]), flush=Recorder())
    # the last 4 would start at the tool result; the cut moves back to the call
    assert result.summarised_indices == (1, 2, 3)
    assert list(result.messages[2:]) == messages[4:]


def test_cut_moves_later_when_no_earlier_cut_is_clean() -> None:
    calls = (ToolCall("a", "t", {}), ToolCall("b", "t", {}))
    messages = [
        Message("assistant", "", tool_calls=calls),
        Message("tool", "ra", tool_call_id="a"),
        Message("tool", "rb", tool_call_id="b"),
        Message("assistant", "done"),
        Message("user", "next?"),
    ]
    policy = ContextPolicy(preserve_recent_messages=3)
    result = compact(messages, model=None, flush=Recorder(), policy=policy)
    assert result.summarised_indices == (0, 1, 2)
    assert list(result.messages[1:]) == messages[3:]


def test_nothing_to_compact_is_a_no_op_without_flush_or_model_call() -> None:
    model = ScriptedChatModel([])
    flush = Recorder()
    messages = conversation(2)  # system + 4: all inside the kept tail
    result = compact(messages, model=model, flush=flush)
    assert result.method == "none"
    assert not result.changed
    assert list(result.messages) == messages
    assert flush.batches == []
    assert model.calls == []


def test_preserve_recent_pairs_keeps_the_last_user_turns() -> None:
    messages = conversation(5)
    policy = ContextPolicy(preserve_recent_pairs=2)
    result = compact(messages, model=ScriptedChatModel(["s"]), flush=Recorder(), policy=policy)
    assert list(result.messages[2:]) == messages[7:]
    assert result.messages[2].role == "user"


def test_summary_cache_hits_within_30_minutes_and_misses_after() -> None:
    now = [1000.0]
    cache = SummaryCache(clock=lambda: now[0])
    model = ScriptedChatModel(["first summary", "second summary"])
    messages = conversation(6)

    first = compact(messages, model=model, flush=Recorder(), cache=cache)
    now[0] += 29 * 60
    again = compact(messages, model=model, flush=Recorder(), cache=cache)
    now[0] += 2 * 60  # 31 minutes after the summary was stored
    late = compact(messages, model=model, flush=Recorder(), cache=cache)

    assert (first.cache_hit, again.cache_hit, late.cache_hit) == (False, True, False)
    assert again.summary == "first summary"
    assert late.summary == "second summary"
    assert len(model.calls) == 2


def test_cache_is_keyed_by_the_summarised_messages() -> None:
    cache = SummaryCache(clock=lambda: 0.0)
    model = ScriptedChatModel(["one", "two"])
    compact(conversation(6), model=model, flush=Recorder(), cache=cache)
    other = conversation(6)
    other[1] = Message("user", "A different first question.")
    result = compact(other, model=model, flush=Recorder(), cache=cache)
    assert not result.cache_hit
    assert result.summary == "two"


def test_without_a_model_the_summary_is_extractive_and_bounded() -> None:
    messages = [
        SYSTEM,
        Message("user", "My name is Ada. I like tea and long walks."),
        Message("assistant", "Nice to meet you, Ada! How can I help?"),
        Message("user", "Remember: the deadline is 2025-03-01.\nAlso some chatter here."),
        Message("assistant", "Got it.", tool_calls=(ToolCall("x", "memory_save", {}),)),
        Message("tool", "saved", tool_call_id="x"),
        *conversation(2)[1:],
    ]
    result = compact(messages, model=None, flush=Recorder())
    assert result.method == "extractive"
    text = result.summary
    assert "extractive" in text
    assert "user: My name is Ada." in text
    assert "deadline is 2025-03-01" in text
    assert "assistant called tool memory_save" in text
    assert "chatter" not in text

    tight = compact(
        messages, model=None, flush=Recorder(), policy=ContextPolicy(summary_max_tokens=20)
    )
    assert estimate_tokens(tight.summary) <= 20
    assert "more lines omitted" in tight.summary


def test_context_length_error_on_the_summary_falls_back_to_extractive() -> None:
    model = ScriptedChatModel([ContextLengthError("too long for 8k")])
    result = compact(conversation(6), model=model, flush=Recorder(), cache=SummaryCache())
    assert result.method == "extractive"
    assert "user: Question 0." in result.summary


def test_other_model_errors_fall_back_to_an_extractive_summary(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedChatModel([ChatModelError("provider down")])
    flush = Recorder()
    result = compact(conversation(6), model=model, flush=flush)
    assert len(flush.flushed) == 8  # memory was written before anything was discarded
    assert result.method == "extractive"
    assert result.summary.startswith(EXTRACTIVE_NOTE)
    assert any("provider down" in r.getMessage() for r in caplog.records)


def test_ledger_prevents_flushing_twice_and_marks_the_summary() -> None:
    ledger = FlushLedger()
    flush = Recorder()
    messages = conversation(6)
    ledger.mark(messages[1:5])
    result = compact(messages, model=ScriptedChatModel(["s"]), flush=flush, ledger=ledger)
    assert flush.flushed == messages[5:9]
    assert result.flushed_count == 4
    assert ledger.unflushed(list(result.messages)) == [0, 2, 3, 4, 5]  # summary is marked


def test_no_flush_callback_is_counted_explicitly() -> None:
    result = compact(conversation(6), model=ScriptedChatModel(["s"]), flush=None)
    assert result.flushed_count == 0
    assert result.unflushed_dropped == 8


def test_a_repeated_compaction_folds_the_old_summary_into_the_new() -> None:
    model = ScriptedChatModel(["first", "second"])
    first = compact(conversation(6), model=model, flush=Recorder())
    longer = [*first.messages, *conversation(4)[1:]]
    second = compact(longer, model=model, flush=Recorder())
    assert "first" in model.calls[1].messages[1].content
    assert second.messages[1].content.endswith("second")
    assert [m.role for m in second.messages].count("system") == 1


def test_summary_cache_evicts_the_oldest_beyond_its_cap() -> None:
    cache = SummaryCache(max_entries=2, clock=lambda: 0.0)
    for key in ("a", "b", "c"):
        cache.put(key, key.upper())
    assert len(cache) == 2
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, "B", "C")
