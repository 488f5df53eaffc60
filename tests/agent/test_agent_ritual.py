"""The first-run ritual: BOOTSTRAP.md in the prompt until IDENTITY.md and USER.md are written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_support import tool_call

from memdir.agent import BOOTSTRAP_FILE, ChatAgent, prepare_workspace
from memdir.embeddings.base import HashEmbedder
from memdir.llm import Completion, Message, ScriptedChatModel, ToolSpec
from memdir.memory import Memory

RITUAL_HEADING = "## BOOTSTRAP.md\n"


def ritual_brain(*writes: tuple[str, str]) -> Any:
    """Writes the given files one tool round each, then says it is done."""

    def reply(
        messages: Sequence[Message], tools: Sequence[ToolSpec] | None, schema: Any
    ) -> str | Completion:
        done = sum(1 for m in messages if m.role == "tool")
        if done < len(writes):
            path, content = writes[done]
            return tool_call(f"w{done}", "memory_write_file", path=path, content=content)
        return "All set."

    return reply


def test_the_ritual_is_followed_and_bootstrap_is_deleted(memory: Memory) -> None:
    bootstrap = memory.workspace.root / BOOTSTRAP_FILE
    assert bootstrap.is_file()
    model = ScriptedChatModel(
        ritual_brain(("IDENTITY.md", "# IDENTITY\nI am Pip."), ("./USER.md", "# USER\nAda."))
    )
    with ChatAgent(memory, model) as agent:
        turn = agent.send("Hi! I'm Ada; call yourself Pip.")
        first_prompt = model.calls[0].messages[0].content
        assert RITUAL_HEADING in first_prompt
        assert "Meet your human" in first_prompt  # BOOTSTRAP.md's own text
        assert [e.kind for e in turn.events][-1] == "ritual"
        assert not bootstrap.exists()
        assert RITUAL_HEADING not in agent.system_message().content
        assert not agent.status().ritual_active
    assert "I am Pip." in (memory.workspace.root / "IDENTITY.md").read_text(encoding="utf-8")


def test_the_ritual_needs_both_files(memory: Memory) -> None:
    model = ScriptedChatModel(ritual_brain(("IDENTITY.md", "# IDENTITY\nI am Pip.")))
    with ChatAgent(memory, model) as agent:
        turn = agent.send("Hi")
        assert "ritual" not in [e.kind for e in turn.events]
        assert (memory.workspace.root / BOOTSTRAP_FILE).is_file()
        assert RITUAL_HEADING in agent.system_message().content


def test_a_failed_write_does_not_count(memory: Memory) -> None:
    model = ScriptedChatModel(
        ritual_brain(("IDENTITY.md", "# IDENTITY\nPip"), ("USER.txt", "not markdown"))
    )
    with ChatAgent(memory, model) as agent:
        agent.send("Hi")
    assert (memory.workspace.root / BOOTSTRAP_FILE).is_file()


def test_no_ritual_without_bootstrap(bare_memory: Memory) -> None:
    with ChatAgent(bare_memory, ScriptedChatModel(["hi"])) as agent:
        agent.send("hello")
        assert RITUAL_HEADING not in agent.system_message().content


def test_prepare_workspace_seeds_only_a_brand_new_one(home: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        created = prepare_workspace(memory)
        assert BOOTSTRAP_FILE in created
        (memory.workspace.root / "HEARTBEAT.md").unlink()
        assert prepare_workspace(memory) == []
        assert not (memory.workspace.root / "HEARTBEAT.md").exists()
