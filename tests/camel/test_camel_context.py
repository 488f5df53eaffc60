"""Context creators: scoring, greedy packing under the token limit, system first, tool units."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.camel import (
    ContextRecord,
    ContextWeights,
    MemoryRecord,
    RandomContextCreator,
    RecencyContextCreator,
    ScoreBasedContextCreator,
)
from memdir.errors import InvalidInputError
from memdir.llm import Message, ToolCall, estimate_message_tokens, estimate_messages_tokens

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
SYSTEM = MemoryRecord.create("You are a careful assistant.", "system", timestamp=T0)


def rec(n: int, text: str | None = None, importance: int = 5, role: str = "user") -> MemoryRecord:
    return MemoryRecord.create(
        text or f"message number {n} " + "word " * 10,
        role,  # type: ignore[arg-type]
        importance=importance,
        timestamp=T0 + timedelta(minutes=n),
    )


def ctx(record: MemoryRecord, score: float = 1.0) -> ContextRecord:
    return ContextRecord(record, score)


def test_everything_fits_in_chronological_order_with_system_first() -> None:
    records = [ctx(rec(3)), ctx(rec(1)), ctx(SYSTEM), ctx(rec(2))]
    messages, tokens = ScoreBasedContextCreator(10_000).create_context(records)
    assert messages[0].role == "system"
    assert [m.content.split()[2] for m in messages[1:]] == ["1", "2", "3"]
    assert tokens == estimate_messages_tokens(messages)


def test_packing_respects_the_limit_and_prefers_high_scores() -> None:
    records = [ctx(SYSTEM)] + [ctx(rec(n), score=0.1) for n in range(10)]
    records[4] = ctx(records[4].record, score=5.0)  # message number 3 is the best hit
    one = estimate_message_tokens(records[1].record.message)
    limit = estimate_messages_tokens([SYSTEM.message]) + 3 * one
    messages, tokens = ScoreBasedContextCreator(limit).create_context(records)
    assert tokens <= limit
    assert messages[0] == SYSTEM.message
    assert len(messages) == 4
    assert any("number 3 " in m.content for m in messages)
    assert any("number 9 " in m.content for m in messages)  # the most recent


def test_greedy_packing_skips_a_big_record_and_keeps_filling() -> None:
    big = ctx(rec(9, "huge " * 400, importance=10), score=1.0)
    small = [ctx(rec(n), score=0.5) for n in range(3)]
    limit = 200
    messages, tokens = ScoreBasedContextCreator(limit).create_context([big, *small])
    assert tokens <= limit
    assert len(messages) == 3
    assert all("huge" not in m.content for m in messages)


def test_system_message_over_the_limit_is_an_error() -> None:
    with pytest.raises(InvalidInputError, match="system message alone"):
        ScoreBasedContextCreator(5).create_context([ctx(SYSTEM)])


def test_importance_wins_when_the_weights_say_so() -> None:
    low = ctx(rec(2, "recent but trivial " * 5, importance=1))
    high = ctx(rec(1, "older but critical " * 5, importance=10))
    limit = estimate_messages_tokens([high.record.message])
    only_importance = ScoreBasedContextCreator(limit, ContextWeights(0, 0, 1, 0))
    assert only_importance.create_context([low, high])[0] == [high.record.message]
    only_recency = ScoreBasedContextCreator(limit, ContextWeights(1, 0, 0, 0))
    assert only_recency.create_context([low, high])[0] == [low.record.message]


def test_similarity_is_the_retrieval_score() -> None:
    a = ctx(rec(1, "alpha " * 10), score=0.9)
    b = ctx(rec(2, "bravo " * 10), score=0.1)
    limit = estimate_messages_tokens([a.record.message])
    creator = ScoreBasedContextCreator(limit, ContextWeights(0, 1, 0, 0))
    assert creator.create_context([a, b])[0] == [a.record.message]


def test_access_frequency_counts_returns_and_tips_the_balance() -> None:
    a = ctx(rec(1, "alpha " * 10))
    b = ctx(rec(2, "bravo " * 10))
    roomy = ScoreBasedContextCreator(1_000, ContextWeights(0, 0, 0, 1))
    roomy.create_context([a])
    roomy.create_context([a])
    assert roomy.access_count(a.record.uuid) == 2
    assert roomy.access_count(b.record.uuid) == 0
    scores = roomy.score([a, b])
    assert scores[a.record.uuid] > scores[b.record.uuid]
    roomy.token_limit = estimate_messages_tokens([a.record.message])
    assert roomy.create_context([b, a])[0] == [a.record.message]


def test_duplicate_uuids_appear_once() -> None:
    record = rec(1)
    messages, _ = ScoreBasedContextCreator(1_000).create_context(
        [ctx(record, 0.2), ctx(record, 0.9)]
    )
    assert messages == [record.message]


def test_tool_calls_and_results_stay_together_or_go_together() -> None:
    call = Message("assistant", "", tool_calls=(ToolCall("c1", "memory_search", {"q": "x"}),))
    result = Message("tool", "result text " * 20, tool_call_id="c1")
    orphan = Message("tool", "orphan", tool_call_id="missing")
    records = [
        ctx(rec(1, "question")),
        ctx(MemoryRecord.create(call, timestamp=T0 + timedelta(minutes=2))),
        ctx(MemoryRecord.create(result, timestamp=T0 + timedelta(minutes=3))),
        ctx(MemoryRecord.create(orphan, timestamp=T0 + timedelta(minutes=4))),
    ]
    messages, _ = ScoreBasedContextCreator(1_000).create_context(records)
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    pair_cost = estimate_message_tokens(call) + estimate_message_tokens(result)
    tight = estimate_messages_tokens([]) + pair_cost - 1  # the pair alone does not fit
    messages, _ = ScoreBasedContextCreator(tight).create_context(records)
    assert messages == [records[0].record.message]


def test_recency_creator_keeps_the_newest_without_gaps() -> None:
    old = ctx(rec(1, "tiny"))
    big = ctx(rec(2, "huge " * 100))
    new = ctx(rec(3, "latest"))
    limit = estimate_messages_tokens([SYSTEM.message, old.record.message, new.record.message])
    messages, tokens = RecencyContextCreator(limit).create_context([old, big, new, ctx(SYSTEM)])
    assert messages == [SYSTEM.message, new.record.message]  # stops at the big one: no gap
    assert tokens <= limit


@pytest.mark.parametrize("limit", [0, -3, True])
def test_bad_token_limits_are_refused(limit: object) -> None:
    with pytest.raises(InvalidInputError, match="token_limit"):
        ScoreBasedContextCreator(limit)  # type: ignore[arg-type]


def test_weights_must_be_non_negative_and_not_all_zero() -> None:
    with pytest.raises(InvalidInputError):
        ContextWeights(0, 0, 0, 0)
    with pytest.raises(InvalidInputError):
        ContextWeights(recency=-1)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 400), max_size=25),
    scores=st.lists(st.floats(0, 3), min_size=25, max_size=25),
    limit=st.integers(30, 2_000),
)
def test_packing_never_exceeds_the_limit(sizes: list[int], scores: list[float], limit: int) -> None:
    records = [ctx(SYSTEM)] + [
        ctx(rec(n, "x" * size + f" {n}"), scores[n]) for n, size in enumerate(sizes)
    ]
    for creator in (ScoreBasedContextCreator(limit), RecencyContextCreator(limit)):
        messages, tokens = creator.create_context(records)
        assert tokens == estimate_messages_tokens(messages) <= limit
        assert messages[0] == SYSTEM.message
        stamps = [int(m.content.rsplit(" ", 1)[1]) for m in messages[1:]]
        assert stamps == sorted(stamps)


def task_rec(n: int, task: str | None) -> MemoryRecord:
    return MemoryRecord.create(
        f"record {n} of {task or 'no task'} " + "word " * 10,
        "user",
        task_id=task,
        timestamp=T0 + timedelta(minutes=n),
    )


def test_a_task_partitions_the_records() -> None:
    records = [ctx(SYSTEM), ctx(task_rec(1, "billing")), ctx(task_rec(2, "hiring")),
               ctx(task_rec(3, None))]  # fmt: skip
    for creator in (
        ScoreBasedContextCreator(10_000, task_id="billing"),
        RecencyContextCreator(10_000, task_id="billing"),
        RandomContextCreator(10_000, task_id="billing", seed=1),
    ):
        messages, _ = creator.create_context(records)
        kept = [m.content.split(" of ")[1].split()[0] for m in messages[1:]]
        assert kept == ["billing", "no"], type(creator).__name__  # hiring is another task
    everything, _ = ScoreBasedContextCreator(10_000).create_context(records)
    assert len(everything) == 4


def test_the_task_weight_prefers_the_tasks_own_records() -> None:
    own, shared = ctx(task_rec(1, "billing")), ctx(task_rec(2, None))
    limit = estimate_messages_tokens([own.record.message])
    by_task = ScoreBasedContextCreator(limit, ContextWeights(1, 0, 0, 0, task=5), task_id="billing")
    assert by_task.create_context([own, shared])[0] == [own.record.message]
    by_recency = ScoreBasedContextCreator(limit, ContextWeights(1, 0, 0, 0), task_id="billing")
    assert by_recency.create_context([own, shared])[0] == [shared.record.message]
    assert by_task.score([own, shared])[own.record.uuid] == 5.0  # oldest: recency 0, task 5


def test_random_packing_is_repeatable_fits_and_keeps_order() -> None:
    records = [ctx(SYSTEM)] + [ctx(rec(n)) for n in range(12)]
    limit = estimate_messages_tokens([SYSTEM.message]) + 4 * estimate_message_tokens(
        records[1].record.message
    )
    first, tokens = RandomContextCreator(limit, seed=7).create_context(records)
    again, _ = RandomContextCreator(limit, seed=7).create_context(records)
    other, _ = RandomContextCreator(limit, seed=8).create_context(records)
    assert first == again
    assert first != other
    assert tokens <= limit
    assert first[0] == SYSTEM.message
    numbers = [int(m.content.split()[2]) for m in first[1:]]
    assert numbers == sorted(numbers)
    assert len(numbers) == 4
    assert numbers != list(range(8, 12))  # not simply the newest


def test_a_blank_task_id_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="task_id"):
        RandomContextCreator(100, task_id=" ")


def test_records_of_one_instant_are_packed_by_relevance_not_by_arrival() -> None:
    """A vector search returns its hits best first, all written in the same instant:
    the creator must keep the most relevant, whatever order they came in."""
    same = T0 + timedelta(hours=1)
    hits = [
        ctx(MemoryRecord.create(f"hit {n} " + "word " * 10, timestamp=same), score=score)
        for n, score in enumerate([0.52, 0.50, 0.48, 0.46, 0.44])  # close, as search scores are
    ]
    one = estimate_message_tokens(hits[0].record.message)
    creator = ScoreBasedContextCreator(estimate_messages_tokens([]) + 2 * one)
    assert len(set(creator.score(hits).values())) == 5  # the tie left only similarity
    messages, _ = creator.create_context(hits)
    assert sorted(m.content.split()[1] for m in messages) == ["0", "1"]
    reversed_order, _ = ScoreBasedContextCreator(creator.token_limit).create_context(hits[::-1])
    assert sorted(m.content.split()[1] for m in reversed_order) == ["0", "1"]
