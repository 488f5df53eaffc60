"""Loading precedence: agent first, then global; USER.md always global."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.errors import EditError, InvalidInputError, NotFoundError
from memdir.workspace import PROMPT_FILES, Workspace


def test_agent_file_overrides_the_global_one(agent_ws: Workspace, global_ws: Workspace) -> None:
    loaded = agent_ws.load_bootstrap("SOUL.md")
    assert loaded.origin == "agent"
    assert loaded.path == agent_ws.root / "SOUL.md"
    assert loaded.content is not None
    assert "You are **Coder**" in loaded.content


def test_agent_falls_back_to_the_global_file(agent_ws: Workspace, global_ws: Workspace) -> None:
    loaded = agent_ws.load_bootstrap("AGENTS.md")
    assert loaded.origin == "global"
    assert loaded.path == global_ws.root / "AGENTS.md"
    assert loaded.content == global_ws.read_file("AGENTS.md")


def test_user_md_always_comes_from_the_global_workspace(
    agent_ws: Workspace, global_ws: Workspace
) -> None:
    agent_ws.write_file("USER.md", "# what the agent learned about the user\n")
    loaded = agent_ws.load_bootstrap("USER.md")
    assert (loaded.origin, loaded.content) == (
        "global",
        "# what the agent learned about the user\n",
    )
    assert global_ws.read_file("USER.md") == agent_ws.read_file("USER.md") == loaded.content
    assert not (agent_ws.root / "USER.md").exists()


def test_a_stray_agent_user_md_is_ignored_by_read_edit_and_prompt(home: Path) -> None:
    agent = Workspace(home, "coder")
    agent.seed()
    (agent.root / "USER.md").write_text("# a copy an older memdir left\n")
    loaded = agent.load_bootstrap("USER.md")
    assert (loaded.origin, loaded.path, loaded.content) == ("missing", None, None)
    with pytest.raises(NotFoundError):
        agent.read_file("USER.md")
    Workspace(home).seed()
    agent.edit_file("USER.md", "about your human", "about your human (edited)")
    assert agent.read_file("USER.md") == agent.load_bootstrap("USER.md").content
    assert "(edited)" in Workspace(home).read_file("USER.md")


def test_missing_everywhere(agent_ws: Workspace, global_ws: Workspace) -> None:
    loaded = global_ws.load_bootstrap("MEMORY.md")
    assert (loaded.name, loaded.origin, loaded.path, loaded.content) == (
        "MEMORY.md",
        "missing",
        None,
        None,
    )


def test_global_workspace_loads_its_own_files(global_ws: Workspace) -> None:
    loaded = global_ws.load_bootstrap_files()
    assert [item.name for item in loaded] == list(PROMPT_FILES)
    assert [item.origin for item in loaded] == ["global"] * 5 + ["missing"]


def test_agent_prompt_files_mix_origins_in_prompt_order(agent_ws: Workspace) -> None:
    origins = {item.name: item.origin for item in agent_ws.load_bootstrap_files()}
    assert origins == {
        "AGENTS.md": "global",
        "SOUL.md": "agent",
        "IDENTITY.md": "global",
        "USER.md": "global",
        "TOOLS.md": "agent",
        "MEMORY.md": "agent",
    }


def test_bootstrap_ritual_does_not_leak_into_agents(
    agent_ws: Workspace, global_ws: Workspace
) -> None:
    own = agent_ws.load_bootstrap("BOOTSTRAP.md")
    assert own.origin == "agent"  # an agent's ritual of its own, not the global one
    assert own.content is not None
    assert "your first run as Coder" in own.content
    assert agent_ws.finish_ritual()
    assert global_ws.ritual_active
    assert agent_ws.load_bootstrap("BOOTSTRAP.md").origin == "missing"
    with pytest.raises(NotFoundError):
        agent_ws.read_file("BOOTSTRAP.md")


def test_unknown_bootstrap_name_is_refused(global_ws: Workspace) -> None:
    with pytest.raises(InvalidInputError, match="not a bootstrap file"):
        global_ws.load_bootstrap("memory/2025-01-31.md")


def test_reads_fall_back_but_writes_stay_in_the_agent_workspace(
    agent_ws: Workspace, global_ws: Workspace
) -> None:
    original = global_ws.read_file("IDENTITY.md")
    assert agent_ws.read_file("IDENTITY.md") == original
    agent_ws.write_file("IDENTITY.md", "# IDENTITY.md\n\n- **Name:** Coder\n")
    assert global_ws.read_file("IDENTITY.md") == original
    assert agent_ws.read_file("IDENTITY.md").endswith("Coder\n")
    assert agent_ws.load_bootstrap("IDENTITY.md").origin == "agent"


def test_editing_a_fallback_file_creates_the_agents_own_copy(
    agent_ws: Workspace, global_ws: Workspace
) -> None:
    original = global_ws.read_file("AGENTS.md")
    assert agent_ws.edit_file("AGENTS.md", "# AGENTS.md: how you work", "# Coder's rules") == 1
    assert global_ws.read_file("AGENTS.md") == original
    assert agent_ws.read_file("AGENTS.md").startswith("# Coder's rules")


def test_failed_edit_of_a_fallback_file_creates_nothing(agent_ws: Workspace) -> None:
    with pytest.raises(EditError, match="was not found"):
        agent_ws.edit_file("HEARTBEAT.md", "text that is not there", "x")
    assert not (agent_ws.root / "HEARTBEAT.md").exists()


def test_other_files_do_not_fall_back(agent_ws: Workspace, global_ws: Workspace) -> None:
    global_ws.write_file("memory/projects.md", "global only\n")
    with pytest.raises(NotFoundError, match="does not exist"):
        agent_ws.read_file("memory/projects.md")


def test_agent_listing_includes_fallback_files(agent_ws: Workspace) -> None:
    assert agent_ws.list_files() == [
        "AGENTS.md",
        "BOOTSTRAP.md",  # the agent's own first-run ritual
        "HEARTBEAT.md",
        "IDENTITY.md",
        "MEMORY.md",
        "SOUL.md",
        "TOOLS.md",
        "USER.md",
    ]
