"""MemoryToolkit: valid JSON schemas, working calls, clear errors, session save/load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from support_camel import open_memory

from memdir.camel import (
    ChatHistoryBlock,
    ChatHistoryMemory,
    MemoryRecord,
    MemoryToolkit,
    RecencyContextCreator,
)
from memdir.memory import Memory
from memdir.tools import ToolError


def test_tools_have_valid_json_schemas(memory: Memory) -> None:
    agent = ChatHistoryMemory(RecencyContextCreator(1_000), ChatHistoryBlock(memory, "s"))
    tools = MemoryToolkit(memory, agent).get_tools()
    assert [t.name for t in tools] == [
        "remember", "recall", "forget", "save_session", "load_session",
    ]  # fmt: skip
    for tool in tools:
        Draft202012Validator.check_schema(tool.parameters)
        assert tool.parameters["type"] == "object"
        assert tool.description
        assert callable(tool)
        assert json.loads(json.dumps(tool.to_openai_schema()))["function"]["name"] == tool.name
    remember = tools[0].parameters
    assert remember["required"] == ["content"]
    assert remember["properties"]["importance"]["anyOf"][0]["maximum"] == 10
    validator = Draft202012Validator(tools[2].parameters)
    assert validator.is_valid({"query": "cat", "reason": "wrong"})
    assert not validator.is_valid({"query": "cat"})


def test_without_an_agent_memory_there_are_no_session_tools(memory: Memory) -> None:
    assert [t.name for t in MemoryToolkit(memory).get_tools()] == ["remember", "recall", "forget"]
    with pytest.raises(ToolError, match="unknown tool 'save_session'"):
        MemoryToolkit(memory).call("save_session", {"session_id": "x"})


def test_remember_recall_forget_round_trip(memory: Memory) -> None:
    toolkit = MemoryToolkit(memory)
    tools = {t.name: t for t in toolkit.get_tools()}
    saved = tools["remember"](content="The user's favourite editor is Helix", importance=8)
    assert saved.startswith("Saved")
    [fact] = memory.list_facts()
    assert (fact.text, fact.importance) == ("The user's favourite editor is Helix", 8)
    recalled = toolkit.call("recall", '{"query": "favourite editor"}')
    assert fact.id in recalled
    assert "Helix" in recalled
    retired = toolkit.call("forget", {"fact_id": fact.id, "reason": "switched to Zed"})
    assert retired.startswith("Retired")
    assert memory.recall("favourite editor") == []


def test_bad_arguments_become_tool_errors_that_say_what_to_fix(memory: Memory) -> None:
    toolkit = MemoryToolkit(memory)
    with pytest.raises(ToolError, match="importance"):
        toolkit.call("remember", {"content": "x", "importance": 11})
    with pytest.raises(ToolError, match="exactly one of fact_id or query"):
        toolkit.call("forget", {"reason": "r"})
    with pytest.raises(ToolError, match="not valid JSON"):
        toolkit.call("recall", "{query:")
    with pytest.raises(ToolError, match="forget failed"):
        toolkit.call("forget", {"fact_id": "f-zzzzzzzzzz", "reason": "r"})


def test_session_tools_save_and_load_the_conversation(home: Path) -> None:
    with open_memory(home) as memory:
        agent = ChatHistoryMemory(RecencyContextCreator(1_000), ChatHistoryBlock(memory))
        agent.write_records([MemoryRecord.create("hello"), MemoryRecord.create("hi!", "assistant")])
        toolkit = MemoryToolkit(memory, agent)
        assert "2 new message(s)" in toolkit.call("save_session", '{"session_id": "greet"}')
    with open_memory(home) as memory:
        agent = ChatHistoryMemory(RecencyContextCreator(1_000), ChatHistoryBlock(memory))
        toolkit = MemoryToolkit(memory, agent)
        assert "Loaded 2 message(s)" in toolkit.call("load_session", {"session_id": "greet"})
        assert [m.content for m in agent.get_context()[0]] == ["hello", "hi!"]
        with pytest.raises(ToolError, match="load_session failed"):
            toolkit.call("load_session", {"session_id": "missing"})
        with pytest.raises(ToolError, match="session_id"):
            toolkit.call("load_session", {"session_id": "../etc"})
