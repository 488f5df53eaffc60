"""Recursive discovery of memory files, with symlink escapes skipped."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memdir.workspace import Workspace

SEEDED = frozenset({"TOOLS.md", "USER.md"})


def _relpaths(workspace: Workspace) -> list[str]:
    """What discovery finds besides the seeded profile files (indexed too)."""
    return [
        item.relpath for item in workspace.discover_memory_files() if item.relpath not in SEEDED
    ]


def test_discovers_memory_files_recursively_and_sorted(global_ws: Workspace) -> None:
    global_ws.write_file("MEMORY.md", "long-term\n")
    global_ws.write_file("memory/2025-02-01.md", "b\n")
    global_ws.write_file("memory/2025-01-31.md", "a\n")
    global_ws.write_file("memory/2024/2024-12-31-review.md", "c\n")
    global_ws.write_file("learnings/errors.md", "d\n")
    global_ws.write_file("notes/billing.md", "a note in a folder of its own\n")
    global_ws.write_file("skills/deploy/SKILL.md", "instructions, not memory\n")
    (global_ws.memory_dir / "draft.txt").write_text("not markdown", encoding="utf-8")
    (global_ws.memory_dir / ".2025-01-31.md.abc.tmp").write_text("temp", encoding="utf-8")
    found = [item.relpath for item in global_ws.discover_memory_files()]
    assert found == sorted(found)
    seeded = [p.name for p in global_ws.root.glob("*.md")]
    prompt_only = ("AGENTS.md", "BOOTSTRAP.md", "HEARTBEAT.md", "SOUL.md", "IDENTITY.md")
    knowledge = [p for p in seeded if p not in prompt_only]
    assert found == sorted(
        [
            *knowledge,
            "learnings/errors.md",
            "memory/2024/2024-12-31-review.md",
            "memory/2025-01-31.md",
            "memory/2025-02-01.md",
            "notes/billing.md",
        ]
    )
    assert "USER.md" in found
    assert not {"AGENTS.md", "HEARTBEAT.md", "skills/deploy/SKILL.md"} & set(found)


def test_discovery_returns_absolute_paths(global_ws: Workspace) -> None:
    global_ws.write_file("memory/a.md", "a\n")
    [(relpath, path)] = [f for f in global_ws.discover_memory_files() if f.relpath not in SEEDED]
    assert relpath == "memory/a.md"
    assert path.is_absolute()
    assert path.read_text(encoding="utf-8") == "a\n"


def test_discovery_skips_symlinks_escaping_the_workspace(
    global_ws: Workspace, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.md").write_text("secret", encoding="utf-8")
    (outside / "folder" / "more.md").write_text("more", encoding="utf-8")
    (global_ws.memory_dir / "secret.md").symlink_to(outside / "secret.md")
    (global_ws.memory_dir / "folder").symlink_to(outside / "folder", target_is_directory=True)
    (global_ws.root / "MEMORY.md").symlink_to(outside / "secret.md")
    global_ws.write_file("memory/real.md", "real\n")
    with caplog.at_level(logging.WARNING, logger="memdir.workspace"):
        assert _relpaths(global_ws) == ["memory/real.md"]
    assert "outside the workspace" in caplog.text


def test_discovery_follows_symlinks_inside_and_survives_loops(global_ws: Workspace) -> None:
    global_ws.write_file("archive/2024-01-01.md", "old\n")
    (global_ws.memory_dir / "archive").symlink_to(
        global_ws.root / "archive", target_is_directory=True
    )
    (global_ws.memory_dir / "loop").symlink_to(global_ws.memory_dir, target_is_directory=True)
    # the folder is indexed once, where the walk meets it first
    assert _relpaths(global_ws) == ["archive/2024-01-01.md"]


def test_daily_notes_are_the_date_named_files(global_ws: Workspace) -> None:
    global_ws.write_file("memory/2025-01-31.md", "a\n")
    global_ws.write_file("memory/2025/2025-02-01.md", "b\n")
    global_ws.write_file("memory/2025-01-31-standup.md", "session note\n")
    global_ws.write_file("memory/ideas.md", "c\n")
    assert [note.relpath for note in global_ws.list_daily_notes()] == [
        "memory/2025-01-31.md",
        "memory/2025/2025-02-01.md",
    ]


def test_discovery_of_an_unseeded_workspace_is_empty(home: Path) -> None:
    assert Workspace(home, "ghost").discover_memory_files() == []
