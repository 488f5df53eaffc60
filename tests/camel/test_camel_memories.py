"""Agent memories: chat history, long-term recall merged and deduplicated, persistence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from support_camel import open_memory

from memdir.camel import (
    ChatHistoryBlock,
    ChatHistoryMemory,
    ContextRecord,
    LongtermAgentMemory,
    MemoryRecord,
    RecencyContextCreator,
    ScoreBasedContextCreator,
    VectorDBBlock,
    merge_records,
)
from memdir.llm import estimate_messages_tokens
from memdir.memory import Memory

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def longterm(memory: Memory, session: str = "talk", **options: int) -> LongtermAgentMemory:
    return LongtermAgentMemory(
        ScoreBasedContextCreator(2_000),
        ChatHistoryBlock.open(memory, session, max_records=options.get("max_records", 50)),
        VectorDBBlock(memory),
        retrieve_limit=options.get("retrieve_limit", 3),
    )


def test_chat_history_memory_packs_the_conversation() -> None:
    system = MemoryRecord.create("Be brief.", "system")
    turns = [MemoryRecord.create(f"turn {n} " + "x" * 60) for n in range(6)]
    limit = estimate_messages_tokens([system.message, turns[4].message, turns[5].message])
    memory = ChatHistoryMemory(RecencyContextCreator(limit), window_size=3)
    memory.write_record(system)
    memory.write_records(turns)
    assert len(memory.retrieve()) == 4  # the system record and a window of 3
    messages, tokens = memory.get_context()
    assert messages[0].content == "Be brief."
    assert [m.content.split()[1] for m in messages[1:]] == ["4", "5"]  # only two fit
    assert tokens == estimate_messages_tokens(messages) <= limit
    memory.clear()
    assert memory.retrieve() == []


def test_longterm_does_not_duplicate_what_the_chat_history_holds(memory: Memory) -> None:
    agent = longterm(memory)
    agent.write_record(MemoryRecord.create("You are a travel assistant.", "system"))
    agent.write_records(
        [
            MemoryRecord.create("I am allergic to peanuts", "user", importance=9),
            MemoryRecord.create("Noted: no peanuts.", "assistant"),
            MemoryRecord.create("Any peanuts in pad thai?", "user"),
        ]
    )
    recalled = agent.vector_db.retrieve("peanuts", limit=5)
    assert len(recalled) >= 2  # the store holds them too...
    merged = agent.retrieve()
    uuids = [c.record.uuid for c in merged]
    assert len(uuids) == len(set(uuids)) == 4  # ...but each appears once
    messages, _ = agent.get_context()
    assert [m.content for m in messages].count("I am allergic to peanuts") == 1
    assert messages[0].role == "system"


def test_longterm_recalls_evicted_records_from_the_notes(memory: Memory) -> None:
    agent = longterm(memory, max_records=3, retrieve_limit=2)
    agent.write_record(MemoryRecord.create("My passport number ends in 4471", importance=2))
    for n in range(4):
        agent.write_record(MemoryRecord.create(f"small talk about weather {n}", importance=3))
    history = [r.content for r in agent.chat_history.records]
    assert "My passport number ends in 4471" not in history
    agent.write_record(MemoryRecord.create("What does my passport number end in?"))
    contents = [c.record.content for c in agent.retrieve()]
    assert "My passport number ends in 4471" in contents


def test_merge_drops_same_text_under_another_uuid_but_keeps_repeated_chat_turns() -> None:
    yes_1 = ContextRecord(MemoryRecord.create("yes", timestamp=T0), 0.5)
    yes_2 = ContextRecord(MemoryRecord.create("yes", timestamp=T0 + timedelta(minutes=1)), 1.0)
    copy = ContextRecord(MemoryRecord.create("  YES ", timestamp=T0 - timedelta(days=3)), 9.0)
    fact = ContextRecord(MemoryRecord.create("the sky is green", timestamp=T0), 3.0)
    again = ContextRecord(fact.record, 1.0)
    merged = merge_records([yes_1, yes_2], [copy, fact, again])
    assert [c.record.uuid for c in merged] == [
        yes_2.record.uuid,
        fact.record.uuid,
        yes_1.record.uuid,
    ]
    assert merged[1].score == 1.0  # rescaled: the best recalled score becomes 1.0


def test_longterm_memory_survives_a_restart(home: Path) -> None:
    with open_memory(home) as memory:
        agent = longterm(memory)
        agent.write_records(
            [
                MemoryRecord.create("Plan the Lisbon trip", importance=8, task_id="trip"),
                MemoryRecord.create("Booked the hotel near Alfama", "assistant"),
            ]
        )
        before = [(r.uuid, r.content, r.importance) for r in agent.chat_history.records]
    with open_memory(home) as memory:
        agent = longterm(memory)
        after = [(r.uuid, r.content, r.importance) for r in agent.chat_history.records]
        assert after == before
        assert agent.chat_history.records[0].task_id == "trip"
        messages, _ = agent.get_context()
        assert [m.content for m in messages] == [
            "Plan the Lisbon trip",
            "Booked the hotel near Alfama",
        ]
