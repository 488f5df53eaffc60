"""ChatHistoryBlock: importance-aware eviction, retrieval and persistence to a session."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support_camel import open_memory

from memdir.camel import ChatHistoryBlock, ChatHistoryMemory, MemoryRecord, RecencyContextCreator
from memdir.camel.history import sidecar_path
from memdir.errors import InvalidInputError, NotFoundError
from memdir.llm import Role
from memdir.memory import Memory

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def turn(n: int, importance: int = 5, role: Role = "user") -> MemoryRecord:
    return MemoryRecord.create(
        f"turn {n}",
        role,
        importance=importance,
        timestamp=T0 + timedelta(minutes=n),
    )


def contents(block: ChatHistoryBlock) -> list[str]:
    return [r.content for r in block.records]


def test_eviction_keeps_important_records_over_newer_trivial_ones() -> None:
    block = ChatHistoryBlock(max_records=4, keep_recent=1)
    block.write_records([turn(0, 9), turn(1, 2), turn(2, 7), turn(3, 2), turn(4, 1)])
    assert contents(block) == ["turn 0", "turn 2", "turn 3", "turn 4"]
    evicted = block.write_record(turn(5, 3))
    assert [r.content for r in evicted] == ["turn 4"]
    assert contents(block) == ["turn 0", "turn 2", "turn 3", "turn 5"]


def test_the_newest_records_and_system_records_are_never_evicted() -> None:
    block = ChatHistoryBlock(max_records=4, keep_recent=2)
    system = MemoryRecord.create("You are helpful.", "system", importance=1, timestamp=T0)
    block.write_records([system, turn(1, 8), turn(2, 9), turn(3, 1), turn(4, 1)])
    # turn 3 and turn 4 are the least important but the newest two: turn 1 goes.
    assert contents(block) == ["You are helpful.", "turn 2", "turn 3", "turn 4"]
    block.write_record(turn(5, 1))
    assert contents(block) == ["You are helpful.", "turn 2", "turn 4", "turn 5"]


def test_equal_importance_evicts_the_oldest_first() -> None:
    block = ChatHistoryBlock(max_records=3, keep_recent=0)
    block.write_records([turn(n) for n in range(6)])
    assert contents(block) == ["turn 3", "turn 4", "turn 5"]


def test_duplicate_uuids_are_written_once() -> None:
    block = ChatHistoryBlock()
    record = turn(1)
    block.write_records([record, record])
    block.write_record(record)
    assert len(block) == 1


def test_retrieve_window_and_decaying_scores() -> None:
    block = ChatHistoryBlock(keep_rate=0.5)
    system = MemoryRecord.create("sys", "system", timestamp=T0)
    block.write_records([system, turn(1), turn(2), turn(3)])
    everything = block.retrieve()
    assert [c.record.content for c in everything] == ["sys", "turn 1", "turn 2", "turn 3"]
    assert [c.score for c in everything] == [1.0, 0.25, 0.5, 1.0]
    window = block.retrieve(window_size=2)
    assert [c.record.content for c in window] == ["sys", "turn 2", "turn 3"]
    assert [c.record.content for c in block.retrieve(window_size=0)] == ["sys"]
    with pytest.raises(InvalidInputError):
        block.retrieve(window_size=-1)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_records": 0}, "max_records"),
        ({"max_records": 3, "keep_recent": 3}, "keep_recent"),
        ({"keep_rate": 0.0}, "keep_rate"),
        ({"session_id": "s1"}, "needs a Memory"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        ChatHistoryBlock(**options)  # type: ignore[arg-type]


def test_history_survives_a_restart_with_its_metadata(home: Path) -> None:
    with open_memory(home) as memory:
        block = ChatHistoryBlock(memory, "chat-1", max_records=3, keep_recent=1)
        block.write_records([turn(1, 9), turn(2, 1), turn(3, 4)])
        block.write_record(
            MemoryRecord.create("tagged", importance=6, task_id="trip", extra={"k": [1, 2]})
        )
        before = block.records
    assert contents_of(before) == ["turn 1", "turn 3", "tagged"]
    with open_memory(home) as memory:
        restored = ChatHistoryBlock.open(memory, "chat-1", max_records=3, keep_recent=1)
        assert restored.records == before
        assert dict(restored.records[-1].extra) == {"k": [1, 2]}
        # eviction after the restart still knows turn 3 is less important than turn 1
        restored.write_record(turn(5, 5))
        assert contents(restored) == ["turn 1", "tagged", "turn 5"]


def contents_of(records: tuple[MemoryRecord, ...]) -> list[str]:
    return [r.content for r in records]


def test_evictions_are_compactions_in_the_transcript_not_deletions(memory: Memory) -> None:
    block = ChatHistoryBlock(memory, "audit", max_records=2, keep_recent=0)
    for n in (1, 2, 3):
        block.write_record(turn(n))
    transcript = memory.session("audit").load()
    assert [m.message.content for m in transcript.messages] == ["turn 1", "turn 2", "turn 3"]
    assert [m.message.content for m in transcript.current()] == ["turn 2", "turn 3"]
    assert transcript.compactions[0].method == "camel-evict"


def test_clear_empties_the_session_but_keeps_the_audit_trail(home: Path) -> None:
    with open_memory(home) as memory:
        block = ChatHistoryBlock(memory, "gone")
        block.write_records([turn(1), turn(2)])
        block.clear()
        assert len(block) == 0
        assert len(memory.session("gone").load().messages) == 2
    with open_memory(home) as memory:
        assert len(ChatHistoryBlock.open(memory, "gone")) == 0


def test_save_and_load_by_session_id_with_autosave_off(home: Path) -> None:
    with open_memory(home) as memory:
        block = ChatHistoryBlock(memory, "draft", autosave=False)
        block.write_records([turn(1), turn(2)])
        assert not memory.session("draft").exists
        assert block.save() == 2
        assert block.save() == 0  # idempotent
        assert block.save("copy") == 2  # switches the block to another session
        assert block.session_id == "copy"
    with open_memory(home) as memory:
        memory_view = ChatHistoryMemory(RecencyContextCreator(500), ChatHistoryBlock(memory))
        assert memory_view.load("draft") == 2
        messages, _ = memory_view.get_context()
        assert [m.content for m in messages] == ["turn 1", "turn 2"]


def test_a_lost_sidecar_falls_back_to_defaults(memory: Memory) -> None:
    block = ChatHistoryBlock(memory, "s", max_records=5)
    block.write_records([turn(1, 9)])
    path = sidecar_path(memory.session("s").path)
    path.write_text("{not json", encoding="utf-8")
    restored = ChatHistoryBlock.open(memory, "s")
    assert [(r.content, r.importance) for r in restored.records] == [("turn 1", 5)]
    path.write_text(json.dumps({"records": {restored.records[0].uuid: {"importance": 42}}}))
    assert ChatHistoryBlock.open(memory, "s").records[0].importance == 5


def test_loading_a_missing_session_or_saving_without_memory_is_a_clear_error(
    memory: Memory,
) -> None:
    with pytest.raises(NotFoundError, match="nope"):
        ChatHistoryBlock(memory, "nope").load()
    with pytest.raises(InvalidInputError, match="no memory"):
        ChatHistoryBlock().save("s")
    with pytest.raises(InvalidInputError, match="session id"):
        ChatHistoryBlock(memory, "bad id")
