"""VectorDBBlock: records in daily notes, found by memdir search and mapped back to records."""

from __future__ import annotations

import re
from pathlib import Path

from support_camel import open_memory

from memdir.camel import MemoryRecord, ScoreBasedContextCreator, VectorDBBlock, VectorDBMemory
from memdir.llm import Message, ToolCall
from memdir.memory import Memory

FACTS = [
    "The production database is PostgreSQL 16 on a dedicated host",
    "Deployments happen every Friday afternoon after the review",
    "The user's cat is called Luna and hates the vacuum cleaner",
]


def test_records_written_here_are_found_by_a_fresh_memory_with_citations(home: Path) -> None:
    with open_memory(home) as memory:
        vector = VectorDBMemory(ScoreBasedContextCreator(1_000), VectorDBBlock(memory))
        vector.write_records([MemoryRecord.create(text, "user") for text in FACTS])
    with open_memory(home) as fresh:
        results = fresh.search("which database runs in production")
        assert results.hits, results.notice
        top = results.hits[0]
        assert "PostgreSQL 16" in top.text
        assert re.fullmatch(r"memory/\d{4}-\d{2}-\d{2}\.md:\d+-\d+", top.citation)
        lines = fresh.get(top.path, from_line=top.start_line, lines=1).text
        assert "camel:record" in lines


def test_write_returns_the_citation_of_each_record(memory: Memory) -> None:
    block = VectorDBBlock(memory)
    multi = MemoryRecord.create("first line\nsecond line", "assistant")
    citations = block.write_records([MemoryRecord.create("one"), multi, MemoryRecord.create("two")])
    path, span = citations[1].split(":")
    start, end = (int(n) for n in span.split("-"))
    assert end == start + 1
    text = memory.get(path, from_line=start, lines=2).text
    assert "first line" in text
    assert "second line" in text
    assert citations[2].endswith(f":{end + 1}-{end + 1}")


def test_retrieve_maps_hits_back_to_records_with_hit_scores(memory: Memory) -> None:
    block = VectorDBBlock(memory)
    records = [MemoryRecord.create(text, "user", importance=7, task_id="ops") for text in FACTS]
    block.write_records(records)
    found = block.retrieve("what is the cat called", limit=2)
    assert found
    assert found[0].record == records[2]
    assert found[0].record.task_id == "ops"
    hit_scores = {h.score for h in memory.search("what is the cat called")}
    assert found[0].score in hit_scores
    assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
    assert len(block.retrieve("database deployments cat", limit=1)) == 1


def test_tool_calls_and_results_are_not_written(memory: Memory) -> None:
    call = Message("assistant", "", tool_calls=(ToolCall("c1", "lookup", {}),))
    result = Message("tool", "looked up", tool_call_id="c1")
    block = VectorDBBlock(memory)
    assert block.write_records([MemoryRecord.create(call), MemoryRecord.create(result)]) == []
    assert memory.list_files("memory/") == []


def test_only_this_workspace_records_are_returned(home: Path) -> None:
    with open_memory(home, None) as shared:
        VectorDBBlock(shared).write_records([MemoryRecord.create(FACTS[2])])
    with open_memory(home) as memory:
        block = VectorDBBlock(memory)
        block.write_records([MemoryRecord.create(FACTS[0])])
        # the agent's search sees the global note, but its lines are not this block's records
        hits = memory.search("cat Luna vacuum").hits
        global_scores = {h.score for h in hits if h.source == "global"}
        own_scores = {h.score for h in hits if h.source != "global"}
        assert global_scores
        assert not global_scores & own_scores
        found = block.retrieve("cat Luna vacuum")
        assert all("Luna" not in c.record.content for c in found)
        assert all(c.score in own_scores for c in found)


def test_global_workspace_records_work_too(home: Path) -> None:
    with open_memory(home, None) as memory:
        block = VectorDBBlock(memory)
        block.write_records([MemoryRecord.create(FACTS[1])])
        assert [c.record.content for c in block.retrieve("when are deployments")] == [FACTS[1]]


def test_clear_hides_earlier_records_but_keeps_the_notes(memory: Memory) -> None:
    block = VectorDBBlock(memory)
    block.write_records([MemoryRecord.create(FACTS[0])])
    block.clear()
    assert block.retrieve("production database") == []
    assert "PostgreSQL" in memory.read_file(memory.list_files("memory/")[0])
    block.write_records([MemoryRecord.create("The staging database is SQLite")])
    assert [c.record.content for c in block.retrieve("staging database")] == [
        "The staging database is SQLite"
    ]


def test_vector_memory_retrieves_by_the_last_user_message(memory: Memory) -> None:
    vector = VectorDBMemory(
        ScoreBasedContextCreator(1_000), VectorDBBlock(memory), retrieve_limit=1
    )
    assert vector.get_context() == ([], vector.get_context()[1])
    vector.write_records([MemoryRecord.create(text) for text in FACTS])
    vector.write_record(MemoryRecord.create("Sure, noted.", "assistant"))
    assert vector.topic == FACTS[2]
    messages, tokens = vector.get_context()
    assert [m.content for m in messages] == [FACTS[2]]
    assert tokens > 0
    assert [c.record.content for c in vector.retrieve("Friday deployments")] == [FACTS[1]]
