"""Flush-then-compact as the window fills, /compact, emergency compaction, model flush."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from agent_support import RecordingDisplay, chatty_brain, lines

from memdir.agent import ChatAgent, find_facts, make_flush, run_chat
from memdir.context import is_summary_message
from memdir.embeddings.base import HashEmbedder
from memdir.errors import ContextLengthError
from memdir.llm import Completion, Message, ScriptedChatModel, ToolSpec, estimate_messages_tokens
from memdir.memory import Memory

FACTS = (
    "My dog's name is Rex and he is a very good boy indeed.",
    "I prefer green tea in the morning, never coffee.",
    "We decided to ship the billing migration on Friday.",
)
FILLER = "Tell me something about the weather and the sea, at some length please."


def daily_notes(memory: Memory) -> str:
    notes = sorted(memory.workspace.memory_dir.glob("????-??-??.md"))
    return "\n".join(p.read_text(encoding="utf-8") for p in notes)


def test_compaction_fires_in_a_small_window_and_flushed_facts_reach_the_daily_note(
    bare_memory: Memory,
) -> None:
    model = ScriptedChatModel(chatty_brain(400), context_window=1400)
    events = []
    with ChatAgent(bare_memory, model, session_id="small") as agent:
        for text in (*FACTS, FILLER, FILLER, FILLER):
            events.extend(e.kind for e in agent.send(text).events)
        assert "compacted" in events
        summaries = [m for m in agent.messages if is_summary_message(m)]
        assert len(summaries) == 1
        assert not any(m.content == FACTS[0] for m in agent.messages)
        notes = daily_notes(bare_memory)  # before the extraction at close
        assert "Rex" in notes
        assert "green tea" in notes
        assert "billing migration on Friday" in notes
        transcript = bare_memory.session("small").load()
        assert transcript.compactions, "the compaction is recorded in the transcript"
        assert len(transcript.messages) == 2 * (len(FACTS) + 3)  # the audit trail keeps all
        assert [s.message for s in transcript.current()] == agent.messages


def test_every_request_fits_the_compaction_threshold(bare_memory: Memory) -> None:
    model = ScriptedChatModel(chatty_brain(400), context_window=1400)
    with ChatAgent(bare_memory, model) as agent:
        for text in (*FACTS, FILLER, FILLER, FILLER, FILLER):
            agent.send(text)
    assert max(estimate_messages_tokens(c.messages) for c in model.calls) < 0.9 * 1400


def test_the_compact_command_flushes_then_summarises(memory: Memory) -> None:
    model = ScriptedChatModel(chatty_brain(100))
    display = RecordingDisplay()
    with ChatAgent(memory, model) as agent:
        run_chat(agent, lines(*FACTS, "/compact"), display)
        assert display.notices[-2].startswith("compacted: extractive")
        assert is_summary_message(agent.messages[0])
        assert len(agent.messages) == 1 + 4
    assert "Rex" in daily_notes(memory)


def test_compact_with_nothing_to_compact_says_so(memory: Memory) -> None:
    display = RecordingDisplay()
    with ChatAgent(memory, ScriptedChatModel(["hi"])) as agent:
        run_chat(agent, lines("hello", "/compact"), display)
    assert any(n.startswith("nothing to compact yet") for n in display.notices)


def test_emergency_compaction_on_a_context_length_error_then_one_retry(
    bare_memory: Memory,
) -> None:
    answers = chatty_brain(200)
    calls = {"n": 0}

    def brain(
        messages: Sequence[Message], tools: Sequence[ToolSpec] | None, schema: Any
    ) -> str | Completion:
        calls["n"] += 1
        if calls["n"] == 4:  # the fourth request: the server says it is too long
            raise ContextLengthError("maximum context length is 1000 tokens")
        return answers(messages, tools, schema)

    model = ScriptedChatModel(brain, context_window=2100)  # 3 turns + tool schemas: under flush
    with ChatAgent(bare_memory, model, session_id="boom") as agent:
        for text in FACTS:
            assert [e.kind for e in agent.send(text).events] == []
        turn = agent.send("and now?")
        assert [e.kind for e in turn.events] == ["emergency"]
        assert turn.reply.startswith("About 'and now?'")
        assert len(model.calls) == 5  # the failed request was retried once
        assert len(model.calls[4].messages) < len(model.calls[3].messages)
        assert is_summary_message(agent.messages[0])
        assert "Rex" in daily_notes(bare_memory)  # flushed before it was dropped
    transcript = bare_memory.session("boom").load()
    assert [c.method for c in transcript.compactions] == ["dropped"]


def test_a_second_context_length_error_ends_the_turn_not_the_chat(memory: Memory) -> None:
    model = ScriptedChatModel(
        [ContextLengthError("too long"), ContextLengthError("still too long"), "fine now"]
    )
    display = RecordingDisplay()
    with ChatAgent(memory, model) as agent:
        with pytest.raises(ContextLengthError, match="/new"):
            agent.send("hello")
        run_chat(agent, lines("again"), display)
    assert display.replies == ["fine now"]


def test_the_flush_uses_the_memory_model_when_there_is_one(home: Any) -> None:
    def curator(
        messages: Sequence[Message], tools: Sequence[ToolSpec] | None, schema: Mapping[str, Any]
    ) -> str:
        assert schema is not None
        if "action" in schema["properties"]:  # the store asks whether the fact is new
            return '{"action": "add"}'
        assert "Rex" in messages[-1].content
        return '{"facts": [{"text": "The user has a dog called Rex", "category": "fact"}]}'

    model = ScriptedChatModel(curator)
    with Memory.open(home, embedder=HashEmbedder(), chat_model=model) as memory:
        result = make_flush(memory)([Message("user", FACTS[0]), Message("assistant", "Nice!")])
        assert result.facts_saved == 1
        assert result.note == "model"
        assert "The user has a dog called Rex" in daily_notes(memory)


def test_the_flush_falls_back_to_the_heuristics_when_the_model_fails() -> None:
    model = ScriptedChatModel(["not json at all", "still not json"])
    facts, method = find_facts([Message("user", FACTS[1])], model)
    assert method == "heuristic"
    assert [f.text for f in facts] == ["The user prefers green tea in the morning, never coffee"]
