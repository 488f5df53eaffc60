"""Curation reads the transcript, not the compacted view the model holds.

After compactions only a summary and the last few turns are left in the context
window; the session-end note must still hold the last 15 messages of the
conversation and the extraction must still see the whole conversation.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent_support import RecordingDisplay, chatty_brain, lines
from typer.testing import CliRunner

from memdir.agent import ChatAgent, run_chat
from memdir.context import Session
from memdir.curate import ExtractionPolicy
from memdir.interfaces.cli import app
from memdir.llm import Message, ScriptedChatModel
from memdir.memory import Memory

TALK = [
    f"Message {n}: tell me about the sea and the weather, at some length please." for n in range(10)
]


def bullets(note: str) -> list[str]:
    return re.findall(r"^- \*\*(user|assistant)\*\*: (.*)$", note, flags=re.MULTILINE)


def test_new_session_note_and_extraction_after_compactions(bare_memory: Memory) -> None:
    model = ScriptedChatModel(chatty_brain(300), context_window=1400)
    display = RecordingDisplay()
    agent = ChatAgent(
        bare_memory, model, session_id="long", extraction_policy=ExtractionPolicy(cooldown_s=0)
    )
    talk = [*TALK, "Remember that the harbour master is called Ines Duarte.", "/new"]
    run_chat(agent, lines(*talk), display)
    assert "compacted" in display.kinds()
    note_path = next(n for n in display.notices if "session note" in n).split("session note ")[1]
    note = (bare_memory.workspace.root / note_path.split(")")[0]).read_text(encoding="utf-8")
    said = bullets(note)
    assert len(said) == 15  # the last 15 of 22 messages, not the few left after compaction
    assert said[-2][1].startswith("Remember that the harbour master")
    assert said[1][1].startswith("Message 4:")  # compacted away long before /new
    facts = [f.text for f in bare_memory.list_facts()]
    assert any("Ines Duarte" in text for text in facts)


def test_cli_session_end_and_extract_read_compacted_messages(home: Path) -> None:
    session = Session(home, "s1")
    stored = session.extend(
        [
            Message("user" if n % 2 == 0 else "assistant", f"Turn {n}: we talk about the harbour.")
            for n in range(16)
        ]
        + [Message("user", "Remember that the harbour master is called Ines Duarte.")]
    )
    session.record_compaction(summary="[summary]", replaced_ids=[s.id for s in stored[:-2]])
    assert len(session.load().current()) == 3  # the model's view: summary and two messages
    runner = CliRunner()
    base = ["--home", str(home), "--set", "embeddings.provider=hash"]
    result = runner.invoke(app, [*base, "session", "end", "s1"])
    assert result.exit_code == 0, result.output
    note = (home / "workspace" / result.stdout.split()[1]).read_text(encoding="utf-8")
    assert len(bullets(note)) == 15
    assert "[summary]" not in note
    result = runner.invoke(app, [*base, "extract", "s1", "--json"])
    assert result.exit_code == 0, result.output
    assert '"ran": true' in result.stdout
    assert "Ines Duarte" in runner.invoke(app, [*base, "facts", "list"]).stdout
