"""The agent tools through ``call_tool``: every tool, its text and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from support_interfaces import needs_facts

from memdir.memory import Memory
from memdir.tools import ToolError, call_tool, parse_arguments


def test_write_read_list_and_edit_round_trip(memory: Memory) -> None:
    written = call_tool(memory, "memory_write_file", {"path": "notes/db.md", "content": "a\nb\n"})
    assert written == "Wrote notes/db.md (4 characters)."
    assert call_tool(memory, "memory_read_file", {"path": "notes/db.md"}) == "a\nb\n"
    assert "notes/db.md" in call_tool(memory, "memory_list_files", {"prefix": "notes/"})
    edited = call_tool(
        memory, "memory_edit_file", {"path": "notes/db.md", "old_text": "b", "new_text": "c"}
    )
    assert edited == "Edited notes/db.md: replaced 1 occurrence."
    assert (memory.workspace.root / "notes" / "db.md").read_text() == "a\nc\n"


def test_list_files_with_unknown_prefix_says_none(memory: Memory) -> None:
    assert call_tool(memory, "memory_list_files", {"prefix": "nothing/"}) == (
        "No Markdown files under 'nothing/'."
    )


def test_get_returns_numbered_lines_with_a_header(memory: Memory) -> None:
    memory.write_file("memory/2024-05-01.md", "one\ntwo\nthree\nfour\n")
    text = call_tool(
        memory, "memory_get", {"path": "memory/2024-05-01.md", "from_line": 2, "lines": 2}
    )
    assert "two" in text
    assert "three" in text
    assert "one" not in text
    assert "four" not in text


def test_search_cites_path_and_lines_with_a_score(memory: Memory) -> None:
    memory.write_file("memory/2024-05-01.md", "# Decisions\n\nWe chose PostgreSQL for billing.\n")
    text = call_tool(memory, "memory_search", {"query": "PostgreSQL billing"})
    assert "memory/2024-05-01.md:" in text
    assert "score" in text
    assert "PostgreSQL" in text


def test_search_without_hits_says_so(memory: Memory) -> None:
    text = call_tool(memory, "memory_search", {"query": "zebra quantum"})
    assert text.startswith("No memory files indexed yet: write daily notes")


@needs_facts
def test_save_then_recall_then_forget(memory: Memory) -> None:
    saved = call_tool(
        memory,
        "memory_save",
        {"content": "The user prefers tea over coffee.", "category": "preference"},
    )
    assert saved.startswith("Saved:")
    assert "tea over coffee" in saved
    recalled = call_tool(memory, "memory_recall", {"query": "tea or coffee"})
    assert "tea over coffee" in recalled
    fact_id = recalled.split("[", 1)[1].split("]", 1)[0]
    forgotten = call_tool(
        memory, "memory_forget", {"fact_id": fact_id, "reason": "the user switched to coffee"}
    )
    assert fact_id in forgotten
    assert "tea over coffee" not in call_tool(memory, "memory_recall", {"query": "tea or coffee"})


@needs_facts
def test_save_writes_todays_daily_note(memory: Memory) -> None:
    call_tool(memory, "memory_save", {"content": "Deploys happen on Fridays."})
    daily = [p for p in memory.list_files("memory/") if p.endswith(".md")]
    assert any("Deploys happen on Fridays." in memory.read_file(p) for p in daily)


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, "query: Field required"),
        ({"query": ""}, "query: String should have at least 1 character"),
        (
            {"query": "x", "max_results": 0},
            "max_results: Input should be greater than or equal to 1",
        ),
        ({"query": "x", "scope": "planet"}, "scope: Input should be 'agent', 'global' or 'all'"),
        ({"query": "x", "bogus": 1}, "bogus: Extra inputs are not permitted"),
    ],
)
def test_invalid_arguments_name_the_field(
    memory: Memory, arguments: dict[str, object], fragment: str
) -> None:
    with pytest.raises(ToolError, match="invalid arguments for memory_search") as info:
        call_tool(memory, "memory_search", arguments)
    assert fragment in str(info.value)


def test_forget_needs_exactly_one_target(memory: Memory) -> None:
    with pytest.raises(ToolError, match="exactly one of fact_id or query"):
        call_tool(memory, "memory_forget", {"reason": "wrong"})
    with pytest.raises(ToolError, match="exactly one of fact_id or query"):
        call_tool(memory, "memory_forget", {"fact_id": "1", "query": "x", "reason": "wrong"})


def test_unknown_tool_lists_the_known_ones(memory: Memory) -> None:
    with pytest.raises(ToolError, match=r"unknown tool 'memory_fly'.*memory_search"):
        call_tool(memory, "memory_fly", {})


@pytest.mark.parametrize("path", ["../escape.md", "/etc/passwd.md", "notes/x.txt"])
def test_bad_paths_become_tool_errors_and_write_nothing(
    memory: Memory, home: Path, path: str
) -> None:
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    with pytest.raises(ToolError, match="memory_write_file failed"):
        call_tool(memory, "memory_write_file", {"path": path, "content": "x"})
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before


def test_missing_file_names_the_next_step(memory: Memory) -> None:
    with pytest.raises(ToolError, match=r"memory_read_file failed: .*memory_list_files"):
        call_tool(memory, "memory_read_file", {"path": "nope.md"})


def test_ambiguous_edit_is_a_tool_error(memory: Memory) -> None:
    memory.write_file("x.md", "same same")
    with pytest.raises(ToolError, match="occurs 2 times"):
        call_tool(memory, "memory_edit_file", {"path": "x.md", "old_text": "same", "new_text": "s"})
    assert (
        call_tool(
            memory,
            "memory_edit_file",
            {"path": "x.md", "old_text": "same", "new_text": "s", "replace_all": True},
        )
        == "Edited x.md: replaced 2 occurrences."
    )


def test_arguments_must_be_an_object(memory: Memory) -> None:
    with pytest.raises(ToolError, match="must be a JSON object"):
        call_tool(memory, "memory_list_files", ["prefix"])  # type: ignore[arg-type]


def test_parse_arguments_accepts_json_strings_and_objects() -> None:
    assert parse_arguments('{"query": "x"}') == {"query": "x"}
    assert parse_arguments({"query": "x"}) == {"query": "x"}
    assert parse_arguments("") == {}
    with pytest.raises(ToolError, match="not valid JSON"):
        parse_arguments("{query")
    with pytest.raises(ToolError, match="must be a JSON object"):
        parse_arguments("[1]")


@pytest.mark.slow
def test_search_with_the_default_local_embedder(home: Path) -> None:
    with Memory.open(home) as memory:
        memory.write_file("memory/2024-05-01.md", "We decided to deploy the API on Fridays.\n")
        text = call_tool(memory, "memory_search", {"query": "when do we deploy"})
    assert "memory/2024-05-01.md:1-1" in text
