"""The chat loop driven by a scripted model: tools, transcripts, learnings, commands."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from agent_support import RecordingDisplay, cat_brain, lines, tool_call

from memdir.agent import ChatAgent, chat_tool_specs, parse_command, run_chat
from memdir.errors import ChatModelError
from memdir.llm import Completion, Message, ScriptedChatModel, ToolSpec
from memdir.llm.openai_chat import encode_tool
from memdir.memory import Memory
from memdir.tools import anthropic_tool_schemas, openai_tool_schemas


def daily_notes(memory: Memory) -> str:
    notes = sorted(memory.workspace.memory_dir.glob("????-??-??.md"))
    return "\n".join(p.read_text(encoding="utf-8") for p in notes)


def test_cat_name_survives_a_new_session(memory: Memory) -> None:
    model = ScriptedChatModel(cat_brain)
    display = RecordingDisplay()
    agent = ChatAgent(memory, model)
    first = agent.session_id
    run_chat(
        agent,
        lines("Hi!", "My cat's name is Whiskerino.", "/new", "What is my cat called?", "/exit"),
        display,
    )
    assert display.errors == []
    assert "Whiskerino" in display.replies[-1]
    answering = model.calls[-1].messages
    tool_result = answering[-1]
    assert tool_result.role == "tool"
    assert tool_result.name == "memory_recall"
    assert "Whiskerino" in tool_result.content
    question = answering[-3]
    assert question.role == "user"
    assert question.content == "What is my cat called?"
    # the second session starts fresh: session 1's words are not in its conversation
    assert not any(m.content == "My cat's name is Whiskerino." for m in answering)
    assert agent.session_id != first
    assert any(f"ended session {first}" in n for n in display.notices)
    saved = memory.session(first).load().messages
    assert [c.name for m in saved for c in m.message.tool_calls] == ["memory_save"]
    assert "Whiskerino" in daily_notes(memory)
    assert list(memory.workspace.memory_dir.glob("????-??-??-*.md")), "no session-end note"


def test_the_agent_sends_exactly_the_shared_tool_schemas(memory: Memory) -> None:
    model = ScriptedChatModel(["hello"])
    with ChatAgent(memory, model) as agent:
        agent.send("Hi")
    sent = model.calls[0].tools
    assert sent is not None
    assert [encode_tool(t) for t in sent] == openai_tool_schemas()
    as_anthropic = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
        for t in sent
    ]
    assert as_anthropic == anthropic_tool_schemas()
    assert tuple(sent) == chat_tool_specs()


def test_every_message_is_appended_to_the_transcript(memory: Memory) -> None:
    model = ScriptedChatModel(cat_brain)
    with ChatAgent(memory, model, session_id="talk-1") as agent:
        agent.send("My cat's name is Whiskerino.")
    stored = memory.session("talk-1").load().messages
    assert [s.message.role for s in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[2].message.tool_call_id == stored[1].message.tool_calls[0].id
    assert stored[3].message.content == "Saved."
    assert memory.home / "sessions" / "global" / "talk-1.jsonl" == memory.session("talk-1").path


def test_a_failed_tool_call_is_answered_and_becomes_a_learning(memory: Memory) -> None:
    def brain(
        messages: Sequence[Message], tools: Sequence[ToolSpec] | None, schema: Any
    ) -> str | Completion:
        if messages[-1].role == "tool":
            return f"The tool said: {messages[-1].content}"
        return tool_call("read-1", "memory_read_file", path="notes/missing-file.md")

    model = ScriptedChatModel(brain)
    with ChatAgent(memory, model) as agent:
        turn = agent.send("Read my notes please")
        assert [e.kind for e in turn.events] == ["tool_error"]
        assert not turn.tool_runs[0].ok
        assert turn.reply.startswith("The tool said: Error:")
        errors = (memory.workspace.root / "learnings" / "errors.md").read_text(encoding="utf-8")
        assert "memory_read_file" in errors
        assert "missing-file.md" in errors
        assert "missing-file.md" in agent.system_message().content


def test_a_user_correction_becomes_a_learning(memory: Memory) -> None:
    model = ScriptedChatModel(["Hello Bob!", "Sorry, Sam."])
    display = RecordingDisplay()
    with ChatAgent(memory, model) as agent:
        run_chat(agent, lines("No, hello to you.", "No, my name is Sam, not Bob."), display)
    corrections = memory.workspace.root / "learnings" / "corrections.md"
    text = corrections.read_text(encoding="utf-8")
    assert "my name is Sam, not Bob" in text
    assert "Hello Bob!" in text  # what was corrected
    assert "hello to you" not in text  # no reply before it: nothing to correct
    assert display.kinds().count("correction") == 1


def test_tool_rounds_are_bounded(memory: Memory) -> None:
    model = ScriptedChatModel(lambda m, t, s: tool_call(f"c{len(m)}", "memory_list_files"))
    with ChatAgent(memory, model, max_tool_rounds=3) as agent:
        turn = agent.send("List everything, forever")
        assert len(model.calls) == 3
        assert len(turn.tool_runs) == 3
        assert turn.events[-1].kind == "rounds_exhausted"
        assert agent.messages[-1].role == "tool"  # every call got its result


def test_a_session_is_resumed_from_its_transcript(memory: Memory) -> None:
    with ChatAgent(memory, ScriptedChatModel(["first answer"]), session_id="keep") as agent:
        agent.send("first question")
    model = ScriptedChatModel(["second answer"])
    with ChatAgent(memory, model, session_id="keep") as agent:
        agent.send("second question")
    seen = [m.content for m in model.calls[0].messages[1:]]
    assert seen == ["first question", "first answer", "second question"]
    assert len(memory.session("keep").load().messages) == 4


def test_a_model_error_is_shown_and_the_chat_goes_on(memory: Memory) -> None:
    model = ScriptedChatModel([ChatModelError("server said 503; try again"), "back again"])
    display = RecordingDisplay()
    with ChatAgent(memory, model) as agent:
        run_chat(agent, lines("hello", "hello again"), display)
    assert display.errors == ["server said 503; try again"]
    assert display.replies == ["back again"]


def test_status_help_and_unknown_commands(memory: Memory) -> None:
    display = RecordingDisplay()
    model = ScriptedChatModel(["hi", "ok"], model="tiny", context_window=4096)
    with ChatAgent(memory, model, session_id="s-7") as agent:
        run_chat(agent, lines("hello", "/status", "/help", "/nope", "//not a command"), display)
    status = dict((row[0], row[1]) for row in display.tables[0][2])
    assert status["session"] == "s-7"
    assert status["model"] == "scripted/tiny"
    assert re.fullmatch(r"[\d,]+ / 4,096 \(\d+%\)", status["tokens used"])
    assert status["first-run ritual"].startswith("active")
    assert [row[0] for row in display.tables[1][2]][:2] == ["/new", "/compact"]
    assert display.errors == ["unknown command '/nope'; /help lists the commands"]
    assert model.calls[-1].messages[-1].content == "/not a command"


@pytest.mark.parametrize(
    ("line", "expected"),
    [("/exit", "/exit"), ("/quit", "/exit"), ("  /NEW ", "/new"), ("/bogus", None)],
)
def test_parse_command(line: str, expected: str | None) -> None:
    command = parse_command(line)
    assert command is not None
    assert command.name == expected


@pytest.mark.parametrize("line", ["hello", "//slash", "what is 1/2"])
def test_messages_are_not_commands(line: str) -> None:
    assert parse_command(line) is None


def test_extraction_runs_after_the_conversation(memory: Memory, home: Path) -> None:
    display = RecordingDisplay()
    model = ScriptedChatModel(["Nice to meet you.", "Tea it is.", "Noted."])
    with ChatAgent(memory, model) as agent:
        run_chat(
            agent,
            lines(
                "Hello, I am new here.",
                "I prefer green tea in the afternoon.",
                "Remember that the release is on Friday.",
            ),
            display,
        )
    assert any(n.startswith("memory curated (heuristic)") for n in display.notices)
    notes = daily_notes(memory)
    assert "green tea" in notes
    assert "release is on Friday" in notes
