"""Path safety: every hostile path is refused with InvalidPathError and nothing is written."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.errors import InvalidAgentIdError, InvalidPathError
from memdir.workspace import Workspace, resolve_inside, validate_agent_id, validate_relative_path

Snapshot = Callable[[Path], dict[str, str | bytes]]

HOSTILE_PATHS = [
    "",
    "   ",
    "/etc/passwd.md",
    "/tmp/notes.md",
    "//server/share/notes.md",
    "\\\\server\\share\\notes.md",
    "C:\\notes.md",
    "C:/notes.md",
    "c:notes.md",
    "notes.md:hidden.md",
    "..\\notes.md",
    "memory\\..\\..\\notes.md",
    "memory\\notes.md",
    "../notes.md",
    "memory/../../notes.md",
    "memory/../notes.md",
    "./../notes.md",
    "..",
    "~/notes.md",
    "notes.md\x00.txt",
    "no\x00tes.md",
    "line\nbreak.md",
    "tab\tname.md",
    "notes.txt",
    "notes",
    "notes.md.txt",
    "NOTES.MD",
    "memory/",
    ".md",
    "memory/.md",
    "con.md",
    "memory/nul.md",
    "folder./notes.md",
    "x" * 300 + ".md",
    "a/" * 600 + "notes.md",
]


@pytest.mark.parametrize("agent_id", ["a", "main", "coder-2", "agent_x", "0" * 64])
def test_valid_agent_ids_pass(agent_id: str) -> None:
    assert validate_agent_id(agent_id) == agent_id


@pytest.mark.parametrize(
    "agent_id", ["", "A", "Coder", "-x", "_x", "a b", "a/b", "../x", "x" * 65, "é", "a.b"]
)
def test_invalid_agent_ids_are_refused(agent_id: str, home: Path) -> None:
    with pytest.raises(InvalidAgentIdError, match="invalid agent id"):
        Workspace(home, agent_id)


def test_workspace_init_does_no_io(home: Path) -> None:
    workspace = Workspace(home, "coder")
    assert workspace.root == home / "agents" / "coder"
    assert workspace.global_root == home / "workspace"
    assert not home.exists()


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_hostile_path_is_refused_and_nothing_is_written(
    path: str, agent_ws: Workspace, tmp_path: Path, snapshot: Snapshot
) -> None:
    before = snapshot(tmp_path)
    calls: list[Callable[[], object]] = [
        lambda: agent_ws.write_file(path, "pwned"),
        lambda: agent_ws.edit_file(path, "a", "b"),
        lambda: agent_ws.read_file(path),
        lambda: agent_ws.get(path),
        lambda: agent_ws.delete_file(path),
    ]
    for call in calls:
        with pytest.raises(InvalidPathError, match="invalid workspace path") as caught:
            call()
        assert repr(path)[:40] in str(caught.value)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("value", [None, b"notes.md", 42])
def test_non_string_paths_are_refused(value: object, global_ws: Workspace) -> None:
    with pytest.raises(InvalidPathError, match="expected a string"):
        global_ws.read_file(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "expected"),
    [("./MEMORY.md", "MEMORY.md"), ("memory//2025-01-31.md", "memory/2025-01-31.md")],
)
def test_harmless_forms_are_normalised(path: str, expected: str) -> None:
    assert str(validate_relative_path(path)) == expected


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text("secret\n", encoding="utf-8")
    return outside


def test_file_symlink_escaping_the_workspace_is_refused(
    global_ws: Workspace, tmp_path: Path, snapshot: Snapshot
) -> None:
    outside = _outside(tmp_path)
    (global_ws.root / "leak.md").symlink_to(outside / "secret.md")
    before = snapshot(tmp_path)
    with pytest.raises(InvalidPathError, match="points outside the workspace"):
        global_ws.read_file("leak.md")
    with pytest.raises(InvalidPathError, match="points outside the workspace"):
        global_ws.write_file("leak.md", "overwritten")
    with pytest.raises(InvalidPathError, match="points outside the workspace"):
        global_ws.edit_file("leak.md", "secret", "gone")
    assert snapshot(tmp_path) == before


def test_parent_folder_symlink_escaping_the_workspace_is_refused(
    global_ws: Workspace, tmp_path: Path, snapshot: Snapshot
) -> None:
    outside = _outside(tmp_path)
    (global_ws.root / "notes").symlink_to(outside, target_is_directory=True)
    before = snapshot(tmp_path)
    with pytest.raises(InvalidPathError, match="points outside the workspace"):
        global_ws.write_file("notes/new.md", "escaped")
    with pytest.raises(InvalidPathError, match="points outside the workspace"):
        global_ws.write_file("notes/deeper/new.md", "escaped")
    with pytest.raises(InvalidPathError, match="points outside the workspace"):
        global_ws.read_file("notes/secret.md")
    assert snapshot(tmp_path) == before


def test_dangling_symlink_pointing_outside_is_refused(global_ws: Workspace, tmp_path: Path) -> None:
    target = tmp_path / "outside" / "created.md"
    (global_ws.root / "dangling.md").symlink_to(target)
    with pytest.raises(InvalidPathError, match="points outside the workspace"):
        global_ws.write_file("dangling.md", "escaped")
    assert not target.exists()


def test_daily_note_symlink_escaping_is_refused(global_ws: Workspace, tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    (global_ws.memory_dir / "2025-01-31.md").symlink_to(outside / "secret.md")
    with pytest.raises(InvalidPathError):
        global_ws.append_daily("escaped", dt.date(2025, 1, 31))
    assert (outside / "secret.md").read_text(encoding="utf-8") == "secret\n"


def test_symlink_inside_the_workspace_is_allowed(global_ws: Workspace) -> None:
    global_ws.write_file("MEMORY.md", "kept\n")
    (global_ws.memory_dir / "alias.md").symlink_to(global_ws.root / "MEMORY.md")
    assert global_ws.read_file("memory/alias.md") == "kept\n"


def test_symlink_loop_is_refused(global_ws: Workspace) -> None:
    (global_ws.root / "loop.md").symlink_to(global_ws.root / "loop.md")
    with pytest.raises(InvalidPathError):
        global_ws.read_file("loop.md")


_PIECES = st.sampled_from(
    ["a", "b.md", ".md", "..", ".", "/", "\\", "C:", ":", "~", "\x00", " ", "\n", "memory", "é"]
)


@given(st.lists(_PIECES, max_size=8).map("".join) | st.text(max_size=40))
def test_validated_paths_always_stay_inside(raw: str) -> None:
    root = Path("/nonexistent-memdir-root")
    try:
        relative = validate_relative_path(raw)
    except InvalidPathError:
        return
    assert isinstance(relative, PurePosixPath)
    assert not relative.is_absolute()
    assert ".." not in relative.parts
    assert relative.name.endswith(".md")
    assert "\\" not in str(relative)
    assert "\x00" not in str(relative)
    assert resolve_inside(root, relative).resolve().is_relative_to(root)


def test_absolute_path_outside_never_touched(global_ws: Workspace, tmp_path: Path) -> None:
    target = tmp_path / "abs-target.md"
    with pytest.raises(InvalidPathError, match="absolute paths are not allowed"):
        global_ws.write_file(os.fspath(target), "x")
    assert not target.exists()
