"""Seeding: templates, idempotency, the first-run ritual and agent workspaces."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memdir.curate import memory_entries
from memdir.errors import InvalidInputError
from memdir.workspace import Workspace
from memdir.workspace.seeding import EXAMPLE_SKILL

GLOBAL_FILES = ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md", "HEARTBEAT.md"]
DESIGN_TOOLS = [
    "memory_search",
    "memory_get",
    "memory_save",
    "memory_recall",
    "memory_forget",
    "memory_list_files",
    "memory_read_file",
    "memory_write_file",
    "memory_edit_file",
]


def test_new_global_workspace_gets_templates_and_bootstrap(home: Path) -> None:
    workspace = Workspace(home)
    created = workspace.seed()
    assert created == [*GLOBAL_FILES, "BOOTSTRAP.md", "memory/", EXAMPLE_SKILL]
    for name in [*GLOBAL_FILES, "BOOTSTRAP.md"]:
        text = (workspace.root / name).read_text(encoding="utf-8")
        assert text.startswith(f"# {name}")
    assert workspace.memory_dir.is_dir()
    assert not (workspace.root / "MEMORY.md").exists()


def test_init_seeds_one_example_skill_and_a_deleted_one_stays_gone(home: Path) -> None:
    workspace = Workspace(home)
    workspace.seed()
    [skill] = workspace.skills()
    assert (skill.name, skill.path, skill.origin) == ("memory-review", EXAMPLE_SKILL, "global")
    assert skill.description.startswith("Review the last week of daily notes")
    text = workspace.read_file(EXAMPLE_SKILL)
    assert "memory_edit_file" in text
    assert "memdir init" in text
    workspace.delete_file(EXAMPLE_SKILL)
    assert workspace.seed() == []  # the skills/ folder is there: the example is not forced back
    assert workspace.skills() == []


def test_seeding_twice_keeps_every_edit(global_ws: Workspace) -> None:
    global_ws.edit_file("SOUL.md", "a little dry", "very dry indeed")
    global_ws.write_file("USER.md", "# USER.md\n\n- **Name:** Ada\n")
    edited = {name: global_ws.read_file(name) for name in GLOBAL_FILES}
    assert global_ws.seed() == []
    assert {name: global_ws.read_file(name) for name in GLOBAL_FILES} == edited
    assert "very dry indeed" in global_ws.read_file("SOUL.md")


def test_seeding_restores_only_missing_files(global_ws: Workspace) -> None:
    global_ws.delete_file("TOOLS.md")
    assert global_ws.seed() == ["TOOLS.md"]


def test_bootstrap_ritual_lifecycle(home: Path) -> None:
    workspace = Workspace(home)
    assert "BOOTSTRAP.md" in workspace.seed()
    ritual = workspace.read_file("BOOTSTRAP.md")
    for step in ("IDENTITY.md", "USER.md", "SOUL.md", "delete"):
        assert step in ritual
    workspace.edit_file("IDENTITY.md", "(pick one together)", "Nova")
    workspace.delete_file("BOOTSTRAP.md")
    assert workspace.seed() == []
    assert not (workspace.root / "BOOTSTRAP.md").exists()
    assert "Nova" in workspace.read_file("IDENTITY.md")


def test_workspace_with_an_identity_file_is_not_brand_new(home: Path) -> None:
    root = home / "workspace"
    root.mkdir(parents=True)
    (root / "USER.md").write_text("# Me\n", encoding="utf-8")
    created = Workspace(home).seed()
    assert "BOOTSTRAP.md" not in created
    assert "USER.md" not in created
    assert (root / "USER.md").read_text(encoding="utf-8") == "# Me\n"


def test_agents_template_teaches_memory_use(global_ws: Workspace) -> None:
    agents = global_ws.read_file("AGENTS.md")
    for tool in DESIGN_TOOLS:
        assert tool in agents
    assert "memory/YYYY-MM-DD.md" in agents
    assert "BOOTSTRAP.md" in agents
    assert "HEARTBEAT_OK" in global_ws.read_file("HEARTBEAT.md")


def test_agent_workspace_is_personalised(home: Path) -> None:
    agent = Workspace(home, "coder")
    created = agent.seed(name="Coder", description="Writes and reviews Python code.")
    assert created == ["SOUL.md", "TOOLS.md", "MEMORY.md", "BOOTSTRAP.md", "memory/"]
    soul = agent.read_file("SOUL.md")
    assert soul.startswith("# SOUL.md: Coder\n")
    assert "You are **Coder**" in soul
    assert "Writes and reviews Python code." in soul
    assert "## Continuity\n\nYou wake up fresh each session." in soul
    assert "$" not in soul
    memory = agent.read_file("MEMORY.md")
    assert memory.startswith("# MEMORY.md: Coder\n\n<!-- Curated long-term memory")
    assert memory_entries(memory) == []  # the placeholder is no entry the loss guard counts
    ritual = agent.read_file("BOOTSTRAP.md")
    assert ritual.startswith("# BOOTSTRAP.md: your first run as Coder")
    assert "memory_finish_ritual" in ritual
    assert agent.memory_dir.is_dir()
    assert not agent.global_root.exists()  # seeding an agent leaves the global alone


def test_an_agent_that_finished_its_ritual_gets_no_new_one(home: Path) -> None:
    agent = Workspace(home, "coder")
    agent.seed(name="Coder")
    assert agent.finish_ritual()
    assert not agent.finish_ritual()  # nothing left to finish
    agent.delete_file("TOOLS.md")
    assert agent.seed(name="Coder") == ["TOOLS.md"]  # SOUL.md exists: not brand-new


def test_agent_name_defaults_to_its_id(home: Path) -> None:
    agent = Workspace(home, "researcher")
    agent.seed()
    assert "You are **researcher**" in agent.read_file("SOUL.md")


def test_agent_seed_twice_keeps_edits(agent_ws: Workspace) -> None:
    agent_ws.write_file("MEMORY.md", "- likes tests\n")
    assert agent_ws.seed(name="Other") == []
    assert agent_ws.read_file("MEMORY.md") == "- likes tests\n"
    assert "Coder" in agent_ws.read_file("SOUL.md")


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_bad_agent_name_is_refused_before_writing(home: Path, name: str) -> None:
    agent = Workspace(home, "coder")
    with pytest.raises(InvalidInputError, match="agent name"):
        agent.seed(name=name or " ")
    assert not home.exists()


def test_concurrent_seeding_creates_each_file_once(home: Path) -> None:
    results: list[list[str]] = []
    barrier = threading.Barrier(6)

    def seed() -> None:
        barrier.wait()
        results.append(Workspace(home).seed())

    threads = [threading.Thread(target=seed) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    files = [name for created in results for name in created if not name.endswith("/")]
    assert sorted(files) == sorted([*GLOBAL_FILES, "BOOTSTRAP.md", EXAMPLE_SKILL])
    on_disk = [p.name for p in (home / "workspace").iterdir() if p.is_file()]
    assert sorted(on_disk) == sorted(f for f in files if "/" not in f)


def test_no_agent_may_be_called_global_as_the_global_workspace_is(tmp_path: Path) -> None:
    """Its sessions would share the global workspace's folder (sessions/global/)."""
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "--home", str(tmp_path / "home"), "--agent", "global",
         "init"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "choose another id for the agent" in done.stderr
    assert not (tmp_path / "home" / "agents" / "global").exists()
