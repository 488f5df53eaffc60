"""The MCP server over stdio, driven by the SDK's client in a real subprocess.

Starting the server costs about two seconds (the SDK's imports), so one session
runs a whole script and the tests below check its transcript.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from support_interfaces import child_env, needs_facts

from memdir.tools import TOOLS

pytestmark = pytest.mark.slow
DAILY = "memory/2024-05-01.md"


def run_session(home: Path, body: Callable[[Client], Awaitable[Any]], *extra: str) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir.interfaces.mcp", "--home", str(home), "--embedder", "hash", *extra],
        env=child_env(),
    )

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=30) as client:
            return await body(client)

    return anyio.run(main)


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


async def script(client: Client) -> dict[str, Any]:
    """Everything the tests check, in one session; each step's result by name."""
    out: dict[str, Any] = {"tools": (await client.list_tools()).tools}

    async def step(name: str, tool: str, **arguments: Any) -> None:
        out[name] = await client.call_tool(tool, arguments)

    await step("write", "memory_write_file", path=DAILY, content="# Notes\n\nWe use SQLite.\n")
    await step("edit", "memory_edit_file", path=DAILY, old_text="SQLite", new_text="SQLite (WAL)")
    await step("read", "memory_read_file", path=DAILY)
    await step("get", "memory_get", path=DAILY, from_line=3)
    await step("list", "memory_list_files", prefix="memory/")
    await step("search", "memory_search", query="SQLite")
    await step("save", "memory_save", content="The user's cat is named Miso.")
    await step("recall", "memory_recall", query="cat name")
    await step("forget", "memory_forget", query="cat Miso", reason="the cat was renamed")
    await step("bad_path", "memory_read_file", path="../../etc/passwd.md")
    await step("missing", "memory_read_file", path="missing.md")
    await step("bad_type", "memory_search", query="x", max_results="many")
    await step("bad_edit", "memory_edit_file", path="AGENTS.md", old_text="§§", new_text="x")
    await step("unknown", "memory_teleport")
    await step("after_errors", "memory_list_files")
    await step("memory_md", "memory_write_file", path="MEMORY.md", content="# Memory\n- tea\n")
    out["resources"] = (await client.list_resources()).resources
    out["resource"] = await client.read_resource("memdir://workspace/MEMORY.md")
    try:
        await client.read_resource("memdir://workspace/NOPE.md")
    except MCPError as exc:
        out["missing_resource"] = exc
    return out


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    home = tmp_path_factory.mktemp("mcp") / "home"
    return home, run_session(home, script)


def ok_text(transcript: tuple[Path, dict[str, Any]], name: str) -> str:
    result = transcript[1][name]
    assert not result.is_error, text_of(result)
    return text_of(result)


def error_text(transcript: tuple[Path, dict[str, Any]], name: str) -> str:
    result = transcript[1][name]
    assert result.is_error, text_of(result)
    return text_of(result)


def test_tools_are_listed_with_their_schemas(transcript: tuple[Path, dict[str, Any]]) -> None:
    tools = transcript[1]["tools"]
    assert [t.name for t in tools] == [spec.name for spec in TOOLS]
    for tool, spec in zip(tools, TOOLS, strict=True):
        assert tool.description == spec.description
        assert tool.input_schema == spec.input_schema()
        assert tool.annotations.read_only_hint is spec.read_only


def test_file_tools_round_trip(transcript: tuple[Path, dict[str, Any]]) -> None:
    home = transcript[0]
    assert ok_text(transcript, "write") == f"Wrote {DAILY} (24 characters)."
    assert ok_text(transcript, "edit") == f"Edited {DAILY}: replaced 1 occurrence."
    assert ok_text(transcript, "read") == "# Notes\n\nWe use SQLite (WAL).\n"
    assert ok_text(transcript, "get") == f"{DAILY} lines 3-3 of 3:\n3\tWe use SQLite (WAL)."
    assert ok_text(transcript, "list") == DAILY
    assert (home / "workspace" / DAILY).read_text() == "# Notes\n\nWe use SQLite (WAL).\n"


def test_search_cites_the_written_note(transcript: tuple[Path, dict[str, Any]]) -> None:
    text = ok_text(transcript, "search")
    assert f"[1] {DAILY}:3-3  score" in text
    assert "We use SQLite (WAL)." in text


@needs_facts
@pytest.mark.parametrize("step", ["save", "recall", "forget"])
def test_fact_tools(transcript: tuple[Path, dict[str, Any]], step: str) -> None:
    assert "Miso" in ok_text(transcript, step)


@pytest.mark.parametrize(
    ("step", "fragment"),
    [
        ("bad_path", "memory_read_file failed: "),
        ("missing", "'missing.md' does not exist in the workspace"),
        ("bad_type", "invalid arguments for memory_search: max_results"),
        ("bad_edit", "was not found in 'AGENTS.md'"),
        ("unknown", "unknown tool 'memory_teleport'"),
    ],
)
def test_failures_are_tool_errors(
    transcript: tuple[Path, dict[str, Any]], step: str, fragment: str
) -> None:
    assert fragment in error_text(transcript, step)


def test_the_server_keeps_serving_after_errors(transcript: tuple[Path, dict[str, Any]]) -> None:
    assert DAILY in ok_text(transcript, "after_errors")
    assert not (transcript[0].parent / "etc").exists()


def test_bootstrap_files_are_resources(transcript: tuple[Path, dict[str, Any]]) -> None:
    listed = transcript[1]["resources"]
    uris = [str(r.uri) for r in listed]
    assert uris[:2] == ["memdir://workspace/AGENTS.md", "memdir://workspace/SOUL.md"]
    assert "memdir://workspace/MEMORY.md" in uris
    assert all(r.mime_type == "text/markdown" for r in listed)
    content = transcript[1]["resource"].contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.text == "# Memory\n- tea\n"


def test_missing_resource_is_a_protocol_error(transcript: tuple[Path, dict[str, Any]]) -> None:
    error = transcript[1]["missing_resource"]
    assert error.code == -32002
    assert "'NOPE.md' does not exist" in error.message


def test_agent_option_scopes_the_workspace(home: Path) -> None:
    async def body(client: Client) -> types.CallToolResult:
        return await client.call_tool(
            "memory_write_file", {"path": "MEMORY.md", "content": "coder memory\n"}
        )

    result = run_session(home, body, "--agent", "coder")
    assert not result.is_error, text_of(result)
    assert (home / "agents" / "coder" / "MEMORY.md").read_text() == "coder memory\n"
