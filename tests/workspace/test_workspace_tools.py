"""The file tools: get, list_files, read_file, write_file, edit_file, delete_file."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from memdir.errors import EditError, InvalidInputError, InvalidPathError, NotFoundError
from memdir.workspace import MAX_FILE_BYTES, Workspace

TEN_LINES = "".join(f"line {n}\n" for n in range(1, 11))


def test_get_whole_file_with_numbers(global_ws: Workspace) -> None:
    global_ws.write_file("memory/ten.md", TEN_LINES)
    part = global_ws.get("memory/ten.md")
    assert (part.path, part.start_line, part.end_line, part.total_lines) == (
        "memory/ten.md",
        1,
        10,
        10,
    )
    assert part.content == TEN_LINES.rstrip("\n")
    assert part.text.splitlines()[0] == " 1\tline 1"
    assert part.text.splitlines()[-1] == "10\tline 10"


def test_get_a_range(global_ws: Workspace) -> None:
    global_ws.write_file("ten.md", TEN_LINES)
    part = global_ws.get("ten.md", from_line=4, lines=3)
    assert (part.start_line, part.end_line) == (4, 6)
    assert part.content == "line 4\nline 5\nline 6"
    assert part.text == "4\tline 4\n5\tline 5\n6\tline 6"


def test_get_clips_at_the_end_of_the_file(global_ws: Workspace) -> None:
    global_ws.write_file("ten.md", TEN_LINES)
    part = global_ws.get("ten.md", from_line=9, lines=50)
    assert (part.start_line, part.end_line, part.content) == (9, 10, "line 9\nline 10")


def test_get_past_the_end_is_a_clear_error(global_ws: Workspace) -> None:
    global_ws.write_file("ten.md", TEN_LINES)
    with pytest.raises(InvalidInputError, match="which has 10 lines"):
        global_ws.get("ten.md", from_line=11)


def test_get_an_empty_file(global_ws: Workspace) -> None:
    global_ws.write_file("empty.md", "")
    part = global_ws.get("empty.md")
    assert (part.start_line, part.end_line, part.total_lines, part.text) == (1, 0, 0, "")


@pytest.mark.parametrize(("from_line", "lines"), [(0, None), (-1, None), (1, 0), (True, None)])
def test_get_refuses_bad_line_arguments(
    global_ws: Workspace, from_line: int, lines: int | None
) -> None:
    with pytest.raises(InvalidInputError):
        global_ws.get("AGENTS.md", from_line=from_line, lines=lines)


def test_list_files_is_recursive_sorted_and_filtered(global_ws: Workspace) -> None:
    global_ws.write_file("memory/2025-01-31.md", "a\n")
    global_ws.write_file("memory/projects/memdir.md", "b\n")
    global_ws.write_file("learnings/errors.md", "c\n")
    (global_ws.root / "memory" / "notes.txt").write_text("not markdown", encoding="utf-8")
    (global_ws.root / "memory" / ".hidden.md").write_text("hidden", encoding="utf-8")
    assert global_ws.list_files("memory/") == ["memory/2025-01-31.md", "memory/projects/memdir.md"]
    assert global_ws.list_files("learnings") == ["learnings/errors.md"]
    assert "AGENTS.md" in global_ws.list_files()
    assert global_ws.list_files("nothing-here") == []


@pytest.mark.parametrize("prefix", ["../", "/etc", "C:\\", "a\x00"])
def test_list_files_refuses_hostile_prefixes(global_ws: Workspace, prefix: str) -> None:
    with pytest.raises(InvalidPathError):
        global_ws.list_files(prefix)


def test_read_missing_file_names_the_next_step(global_ws: Workspace) -> None:
    with pytest.raises(NotFoundError, match=re.escape("'memory/nope.md' does not exist")):
        global_ws.read_file("memory/nope.md")


def test_read_a_folder_named_like_markdown(global_ws: Workspace) -> None:
    (global_ws.root / "folder.md").mkdir()
    with pytest.raises(InvalidPathError, match="is a folder"):
        global_ws.read_file("folder.md")


def test_read_refuses_non_utf8(global_ws: Workspace) -> None:
    (global_ws.root / "latin1.md").write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(InvalidInputError, match="not valid UTF-8"):
        global_ws.read_file("latin1.md")


def test_write_creates_folders_and_returns_the_path(global_ws: Workspace) -> None:
    assert global_ws.write_file("./learnings/deep/er/errors.md", "x\n") == (
        "learnings/deep/er/errors.md"
    )
    assert (global_ws.root / "learnings/deep/er/errors.md").read_text(encoding="utf-8") == "x\n"


def test_write_with_a_file_in_the_way(
    global_ws: Workspace, snapshot: Callable[[Path], object]
) -> None:
    before = snapshot(global_ws.root)
    with pytest.raises(InvalidPathError, match="a file is in the way"):
        global_ws.write_file("AGENTS.md/child.md", "x")
    assert snapshot(global_ws.root) == before


def test_write_refuses_non_text_content(global_ws: Workspace) -> None:
    with pytest.raises(InvalidInputError, match="must be a string"):
        global_ws.write_file("x.md", b"bytes")  # type: ignore[arg-type]
    assert not (global_ws.root / "x.md").exists()


def test_write_leaves_no_temp_files(global_ws: Workspace) -> None:
    for round_ in range(5):
        global_ws.write_file("memory/topic.md", f"round {round_}\n")
    assert sorted(os.listdir(global_ws.memory_dir)) == ["topic.md"]


def test_edit_replaces_one_occurrence(global_ws: Workspace) -> None:
    global_ws.write_file("MEMORY.md", "- likes tea\n- works on memdir\n")
    assert global_ws.edit_file("MEMORY.md", "likes tea", "likes coffee") == 1
    assert global_ws.read_file("MEMORY.md") == "- likes coffee\n- works on memdir\n"


def test_edit_missing_text_changes_nothing(global_ws: Workspace) -> None:
    global_ws.write_file("MEMORY.md", "- likes tea\n")
    with pytest.raises(EditError, match=re.escape("'likes cocoa', was not found in 'MEMORY.md'")):
        global_ws.edit_file("MEMORY.md", "likes cocoa", "x")
    assert global_ws.read_file("MEMORY.md") == "- likes tea\n"


def test_edit_ambiguous_text_needs_replace_all(global_ws: Workspace) -> None:
    global_ws.write_file("MEMORY.md", "tea, tea and more tea\n")
    with pytest.raises(EditError, match="occurs 3 times"):
        global_ws.edit_file("MEMORY.md", "tea", "coffee")
    assert global_ws.read_file("MEMORY.md") == "tea, tea and more tea\n"
    assert global_ws.edit_file("MEMORY.md", "tea", "coffee", replace_all=True) == 3
    assert global_ws.read_file("MEMORY.md") == "coffee, coffee and more coffee\n"


def test_replace_all_with_a_single_occurrence_returns_one(global_ws: Workspace) -> None:
    global_ws.write_file("MEMORY.md", "only once\n")
    assert global_ws.edit_file("MEMORY.md", "once", "twice", replace_all=True) == 1


def test_edit_refuses_empty_old_text(global_ws: Workspace) -> None:
    global_ws.write_file("MEMORY.md", "text\n")
    with pytest.raises(InvalidInputError, match="text to replace is empty"):
        global_ws.edit_file("MEMORY.md", "", "x")
    assert global_ws.read_file("MEMORY.md") == "text\n"


def test_edit_of_a_missing_file(global_ws: Workspace) -> None:
    with pytest.raises(NotFoundError):
        global_ws.edit_file("memory/nope.md", "a", "b")
    assert not (global_ws.memory_dir / "nope.md").exists()


def test_edit_that_would_exceed_the_size_limit(global_ws: Workspace) -> None:
    global_ws.write_file("MEMORY.md", "x\n")
    with pytest.raises(InvalidInputError, match="after the edit"):
        global_ws.edit_file("MEMORY.md", "x", "y" * (MAX_FILE_BYTES + 1))
    assert global_ws.read_file("MEMORY.md") == "x\n"


def test_delete_file(global_ws: Workspace) -> None:
    global_ws.write_file("memory/old.md", "bye\n")
    global_ws.delete_file("memory/old.md")
    assert not (global_ws.memory_dir / "old.md").exists()
    with pytest.raises(NotFoundError):
        global_ws.delete_file("memory/old.md")


def test_agent_cannot_delete_a_global_file(agent_ws: Workspace, global_ws: Workspace) -> None:
    with pytest.raises(NotFoundError):
        agent_ws.delete_file("AGENTS.md")
    assert (global_ws.root / "AGENTS.md").is_file()


def test_resolve_returns_a_path_inside_the_workspace(global_ws: Workspace) -> None:
    resolved = global_ws.resolve("memory/x.md")
    assert resolved == global_ws.root.absolute() / "memory" / "x.md"
    assert isinstance(resolved, Path)
