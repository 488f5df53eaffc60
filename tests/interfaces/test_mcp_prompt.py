"""The MCP server over stdio for the prompt: the ritual, session kinds, prompt.toml, the
context report, structured results of the file tools, and scope=all search.

One real subprocess session runs the whole script (starting one costs about two seconds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from test_mcp_stdio import run_session, text_of

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
from memdir.tools import TOOLS

pytestmark = pytest.mark.slow
NOTE = "memory/notes.md"


async def script(client: Client) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": (await client.list_tools()).tools}

    async def step(name: str, tool: str, **arguments: Any) -> None:
        out[name] = await client.call_tool(tool, arguments)

    out["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
    out["prompts"] = (await client.list_prompts()).prompts
    out["prompt_first_run"] = await client.get_prompt("system_prompt")
    await step("create", "memory_write_file", path=NOTE, content="# Notes\n\n- café\n")
    await step("overwrite", "memory_write_file", path=NOTE, content="# Notes\n\n- tea\n")
    await step("edit", "memory_edit_file", path=NOTE, old_text="tea", new_text="green tea")
    await step("read", "memory_read_file", path=NOTE)
    await step("list", "memory_list_files", prefix="memory/")
    await step("identity", "memory_write_file", path="IDENTITY.md", content="# IDENTITY\nPip\n")
    out["bootstrap_after_identity"] = [
        str(r.uri) for r in (await client.list_resources()).resources
    ]
    await step("user", "memory_edit_file", path="USER.md", old_text="- **Name:**",
               new_text="- **Name:** Ada")  # fmt: skip
    await step("finish_again", "memory_finish_ritual")
    await step("memory", "memory_write_file", path="MEMORY.md", content="- PIN hint: cat\n")
    out["prompt_group"] = await client.get_prompt("system_prompt", {"session_kind": "group"})
    await step("disable", "memory_set_prompt_file", path="TOOLS.md", enabled=False)
    await step("context", "memory_context", session_kind="group")
    await step("set_nothing", "memory_set_prompt_file", path="TOOLS.md")
    await step("search_all", "memory_search", query="Marisol Quintero heroine", scope="all")
    try:
        await client.get_prompt("system_prompt", {"session_kind": "public"})
    except MCPError as exc:
        out["bad_kind"] = exc
    return out


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    home = tmp_path_factory.mktemp("mcp-prompt") / "home"
    with Memory.open(home, "writer", embedder=HashEmbedder()) as writer:
        writer.init()
        writer.append_daily("The novel's heroine is called Marisol Quintero.")  # never synced
    (home / "memdir.toml").write_text("[search]\ncross_agent = true\n")  # scope=all needs it
    return home, run_session(home, script)


def data(transcript: tuple[Path, dict[str, Any]], name: str) -> dict[str, Any]:
    result: types.CallToolResult = transcript[1][name]
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


def test_file_tools_carry_metadata(transcript: tuple[Path, dict[str, Any]]) -> None:
    created, overwritten = data(transcript, "create"), data(transcript, "overwrite")
    assert (created["created"], created["overwritten"]) == (True, False)
    assert (overwritten["created"], overwritten["overwritten"]) == (False, True)
    assert created["bytes"] == len("# Notes\n\n- café\n".encode())  # bytes, not characters
    assert data(transcript, "edit")["replacements"] == 1
    read = data(transcript, "read")
    assert (read["path"], read["lines"], read["bytes"]) == (
        NOTE,
        3,
        len("# Notes\n\n- green tea\n"),
    )
    assert read["updated_at"].endswith(("Z", "+00:00"))
    listed = data(transcript, "list")["files"]
    assert [f["path"] for f in listed] == [NOTE]
    tools = {tool.name: tool for tool in transcript[1]["tools"]}
    assert tools["memory_write_file"].output_schema["properties"]["created"]["type"] == "boolean"


def test_the_ritual_is_reachable_and_ends_by_itself(
    transcript: tuple[Path, dict[str, Any]],
) -> None:
    home, out = transcript
    assert "memdir://workspace/BOOTSTRAP.md" in out["resources"]
    first = out["prompt_first_run"].messages[0].content.text
    assert "## BOOTSTRAP.md" in first
    assert "call memory_finish_ritual" in first
    assert "memdir://workspace/BOOTSTRAP.md" in out["bootstrap_after_identity"]  # USER.md next
    assert not (home / "workspace" / "BOOTSTRAP.md").exists()  # IDENTITY.md + USER.md written
    assert data(transcript, "finish_again") == {"finished": False}


def test_group_prompt_and_context_report(transcript: tuple[Path, dict[str, Any]]) -> None:
    out = transcript[1]
    assert [p.name for p in out["prompts"]] == ["system_prompt"]
    assert [a.name for a in out["prompts"][0].arguments] == ["session_kind"]
    group = out["prompt_group"].messages[0].content.text
    assert "# Session: group" in group
    assert "PIN hint" not in group
    assert data(transcript, "disable") == {
        "path": "TOOLS.md", "enabled": False, "sort_order": 50, "origin": "global",
    }  # fmt: skip
    report = data(transcript, "context")
    rows = {row["name"]: row["status"] for row in report["files"]}
    assert (rows["TOOLS.md"], rows["MEMORY.md"]) == ("DISABLED", "EXCLUDED")
    assert (report["session_kind"], report["tools"]) == ("group", len(TOOLS))
    assert "TOOLS.md: DISABLED order 50" in text_of(out["context"])
    assert out["set_nothing"].is_error
    assert "pass enabled and/or sort_order" in text_of(out["set_nothing"])
    assert "unknown session kind 'public'" in out["bad_kind"].message


def test_search_all_sees_another_agents_new_note(transcript: tuple[Path, dict[str, Any]]) -> None:
    text = text_of(transcript[1]["search_all"])
    assert "Marisol Quintero" in text
