"""An existing OpenClaw workspace used as a memdir agent's folder through a symlink
(docs/integrations.md, "One folder for both"): same file names, same ``memory/`` notes.

The other direction (OpenClaw's ``agents.defaults.workspace`` set to memdir's agent folder,
where OpenClaw seeds its files and its agent writes notes) runs in test_openclaw.py.
"""

from __future__ import annotations

from pathlib import Path

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory

LAYOUT = {  # what an OpenClaw workspace holds (docs.openclaw.ai, "Agent workspace")
    "AGENTS.md": "# AGENTS.md\n\nRead USER.md first. Keep memory in memory/.\n",
    "SOUL.md": "# SOUL.md\n\nBe brief and kind.\n",
    "IDENTITY.md": "# IDENTITY.md\n\n- Name: Claw\n",
    "USER.md": "# USER.md\n\n- Always answer in British English. (active, 2026-01-02)\n",
    "MEMORY.md": "# MEMORY.md\n\n- Deploys happen on Mondays. <!-- importance: 8 -->\n",
    "DREAMS.md": "# DREAMS.md\n\n- Consolidated 3 entries.\n",
    "memory/2026-01-10.md": "# 2026-01-10\n\n- Met Dana about the billing migration.\n",
    "memory/2026-01-11-billing.md": "# Session: billing\n\n- **user**: move billing to v2\n",
}


def openclaw_workspace(root: Path) -> Path:
    for name, text in LAYOUT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / ".git").mkdir()
    return root


def test_an_openclaw_workspace_is_memdirs_global_workspace(tmp_path: Path, home: Path) -> None:
    """One agent (OpenClaw's ``main`` mapped to memdir's ``global``): every file is shared."""
    workspace = openclaw_workspace(tmp_path / "openclaw-workspace")
    home.mkdir()
    (home / "workspace").symlink_to(workspace)
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.sync()
        files = set(memory.list_files())
        assert {"AGENTS.md", "MEMORY.md", "USER.md", "memory/2026-01-10.md"} <= files
        hits = memory.search("billing migration Dana", min_score=0.0).hits
        assert hits[0].citation == "memory/2026-01-10.md:3-3"
        assert memory.get("memory/2026-01-10.md", 3, 1).content.startswith("- Met Dana")
        prompt = memory.system_prompt()
        for line in ("Keep memory in memory/.", "Always answer in British English",
                     "Deploys happen on Mondays."):  # fmt: skip
            assert line in prompt
        assert "Consolidated 3 entries" not in prompt  # DREAMS.md is OpenClaw's review file
        saved = memory.save("The VPN settings live in the ops vault.")
        note = workspace / saved.location.path  # memdir writes into OpenClaw's own folder
        assert note.parent == workspace / "memory"
        assert "The VPN settings live in the ops vault." in note.read_text()


def test_as_an_agent_folder_it_shares_all_but_user_md(tmp_path: Path, home: Path) -> None:
    """Several agents: each OpenClaw workspace is a memdir agent folder; USER.md (one human)
    is memdir's global one, so the agent folder's own USER.md is not what memdir reads."""
    workspace = openclaw_workspace(tmp_path / "openclaw-workspace")
    (home / "workspace").mkdir(parents=True)
    (home / "workspace" / "USER.md").write_text("# USER.md\n\n- Prefers metric units.\n")
    (home / "agents").mkdir()
    (home / "agents" / "main").symlink_to(workspace)
    with Memory.open(home, "main", embedder=HashEmbedder()) as memory:
        memory.sync()
        assert memory.search("billing migration Dana", min_score=0.0).hits[0].path == (
            "memory/2026-01-10.md"
        )
        prompt = memory.system_prompt()
        assert "Keep memory in memory/." in prompt
        assert "Deploys happen on Mondays." in prompt
        assert "Prefers metric units." in prompt
        assert "Always answer in British English" not in prompt
