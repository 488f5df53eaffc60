"""memory_list_facts and memory_recent, and the tools' annotations, through a real MCP client.

One stdio session (the SDK's client, a real server subprocess) saves, supersedes and
forgets facts and writes a note, then lists facts and recent activity; the tests
check its transcript. Annotations are read from the server's tool list.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from test_mcp_stdio import run_session, text_of

from memdir.tools import TOOLS_BY_NAME

pytestmark = pytest.mark.slow
NOTE = "memory/2024-05-01.md"


async def script(client: Client) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": {t.name: t for t in (await client.list_tools()).tools}}

    async def step(name: str, tool: str, **arguments: Any) -> None:
        out[name] = await client.call_tool(tool, arguments)

    await step("empty_facts", "memory_list_facts")
    await step(
        "save_tea", "memory_save", content="The user drinks green tea.", category="preference"
    )
    await step("save_port", "memory_save", content="Staging runs on port 5433.", category="fact")
    await step("save_db", "memory_save", content="Billing uses PostgreSQL 16.", category="decision")
    await step("forget", "memory_forget", query="staging port", reason="staging was retired")
    await step("write", "memory_write_file", path=NOTE, content="# Notes\n\n- a new note\n")
    await step("facts", "memory_list_facts")
    await step("decisions", "memory_list_facts", category="decision")
    await step("history", "memory_list_facts", include_history=True)
    await step("long_ago", "memory_list_facts", as_of="2001-01-01")
    await step("one", "memory_list_facts", limit=1)
    await step("recent", "memory_recent", days=1)
    await step("recent_one", "memory_recent", days=0.5, limit=1)
    await step("recall_by_date", "memory_recall", query="tea", as_of="2999-12-31")
    await step("bad_days", "memory_recent", days=0)
    await step("bad_date", "memory_list_facts", as_of="yesterday")
    return out


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("mcp-catch-up") / "home"
    return run_session(home, script)  # type: ignore[no-any-return]


def ok(transcript: dict[str, Any], name: str) -> str:
    result: types.CallToolResult = transcript[name]
    assert not result.is_error, text_of(result)
    return text_of(result)


def test_list_facts_shows_current_facts_newest_first(transcript: dict[str, Any]) -> None:
    assert ok(transcript, "empty_facts") == "No saved facts."
    text = ok(transcript, "facts")
    assert text.startswith("2 current fact(s) newest first:")
    assert text.index("Billing uses PostgreSQL 16.") < text.index("The user drinks green tea.")
    assert "Staging" not in text  # forgotten
    assert "<memory-results>" in text  # quoted as data


def test_list_facts_filters_and_history(transcript: dict[str, Any]) -> None:
    decisions = ok(transcript, "decisions")
    assert "Billing uses PostgreSQL 16." in decisions
    assert "green tea" not in decisions
    history = ok(transcript, "history")
    assert "3 fact(s), current and retired" in history
    assert "forgotten: staging was retired" in history
    assert ok(transcript, "long_ago") == "No saved facts."
    one = ok(transcript, "one")
    assert "(the 1 newest shown; narrow by category or raise limit)" in one
    assert "Billing uses PostgreSQL 16." in one
    assert "green tea" not in one


def test_recent_lists_written_files_and_changed_facts(transcript: dict[str, Any]) -> None:
    text = ok(transcript, "recent")
    assert text.startswith("Memory activity in the last 1 day(s):")
    files = text[text.index("Files written") : text.index("Facts changed")]
    assert f"- {NOTE} (" in files
    today = datetime.now().astimezone().date().isoformat()  # facts go to today's local note
    assert f"- memory/{today}.md (" in files
    facts = text[text.index("Facts changed") :]
    assert facts.index("forgotten") < facts.index("saved")  # the forgetting came last
    assert facts.count("saved ") == 3
    limited = ok(transcript, "recent_one")
    assert "... and" in limited
    assert limited.count("\n- ") < text.count("\n- ")


def test_as_of_takes_the_plain_date_its_schema_declares(transcript: dict[str, Any]) -> None:
    assert "green tea" in ok(transcript, "recall_by_date")
    schema = transcript["tools"]["memory_recall"].input_schema["properties"]["as_of"]
    assert {"type": "string", "format": "date"} in schema["anyOf"]


def test_bad_arguments_are_tool_errors(transcript: dict[str, Any]) -> None:
    for name, fragment in (("bad_days", "days"), ("bad_date", "as_of")):
        result: types.CallToolResult = transcript[name]
        assert result.is_error
        assert fragment in text_of(result)


@pytest.mark.parametrize(
    ("tool", "read_only", "destructive", "idempotent"),
    [
        ("memory_search", True, None, None),
        ("memory_list_facts", True, None, None),
        ("memory_recent", True, None, None),
        ("memory_save", False, False, False),  # appends: clients need not ask every time
        ("memory_forget", False, True, True),
        ("memory_write_file", False, True, True),
        ("memory_edit_file", False, True, False),
    ],
)
def test_annotations_say_what_each_tool_does(
    transcript: dict[str, Any],
    tool: str,
    read_only: bool,
    destructive: bool | None,
    idempotent: bool | None,
) -> None:
    annotations = transcript["tools"][tool].annotations
    assert annotations.read_only_hint is read_only
    assert annotations.destructive_hint is destructive
    assert annotations.idempotent_hint is idempotent
    assert annotations.open_world_hint is False
    assert TOOLS_BY_NAME[tool].read_only is read_only
