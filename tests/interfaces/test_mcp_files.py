"""The file primitives as MCP tools, through the official client over the live server's
/mcp: a read's sha256, a stale change refused in tool terms, insert, rename, delete and
the multi-line daily append."""

from __future__ import annotations

import hashlib
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support_interfaces import LiveServer

pytestmark = pytest.mark.slow


def session(server: LiveServer, body: Any) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(server.url + "/mcp", http_client=http)) as client,
        ):
            return await body(client)

    return anyio.run(main)


def text_of(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def data_of(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return dict(result.structured_content)


def test_a_stale_write_is_refused_in_tool_terms(server: LiveServer) -> None:
    async def body(client: Client) -> dict[str, types.CallToolResult]:
        path = "notes/mcp-stale.md"
        await client.call_tool("memory_write_file", {"path": path, "content": "v1\n"})
        read = await client.call_tool("memory_read_file", {"path": path})
        await client.call_tool("memory_write_file", {"path": path, "content": "v2\n"})
        sha = data_of(read)["sha256"]
        stale = await client.call_tool(
            "memory_write_file", {"path": path, "content": "v3\n", "expected_sha256": sha}
        )
        stale_edit = await client.call_tool(
            "memory_edit_file",
            {"path": path, "old_text": "v2", "new_text": "v3", "expected_sha256": sha},
        )
        again = await client.call_tool(
            "memory_write_file", {"path": path, "content": "new\n", "create_only": True}
        )
        return {"read": read, "stale": stale, "stale_edit": stale_edit, "again": again}

    out = session(server, body)
    assert data_of(out["read"])["sha256"] == hashlib.sha256(b"v1\n").hexdigest()
    for name in ("stale", "stale_edit"):
        assert out[name].is_error
        assert "changed since you read it" in text_of(out[name])
        assert "memory_read_file (its sha256 is the new expected_sha256)" in text_of(out[name])
    assert out["again"].is_error
    assert "already exists" in text_of(out["again"])
    assert (server.home / "workspace" / "notes" / "mcp-stale.md").read_text() == "v2\n"


def test_insert_rename_delete_and_append(server: LiveServer) -> None:
    summary = "\n".join(f"- step {n} of the session" for n in range(1, 11))

    async def body(client: Client) -> dict[str, types.CallToolResult]:
        await client.call_tool("memory_write_file", {"path": "notes/m.md", "content": "a\nc\n"})
        return {
            "insert": await client.call_tool(
                "memory_insert", {"path": "notes/m.md", "line": 1, "text": "b"}
            ),
            "rename": await client.call_tool(
                "memory_rename_file", {"old_path": "notes/m.md", "new_path": "notes/n.md"}
            ),
            "delete": await client.call_tool("memory_delete_file", {"path": "notes/n.md"}),
            "append": await client.call_tool("memory_append_daily", {"text": summary}),
        }

    out = session(server, body)
    inserted = data_of(out["insert"])
    assert inserted == {
        "path": "notes/m.md",
        "sha256": hashlib.sha256(b"a\nb\nc\n").hexdigest(),
        "lines": 3,
    }
    assert data_of(out["rename"]) == {"old_path": "notes/m.md", "new_path": "notes/n.md"}
    assert data_of(out["delete"]) == {"path": "notes/n.md", "deleted": True}
    assert not (server.home / "workspace" / "notes" / "n.md").exists()
    appended = data_of(out["append"])
    assert appended["end_line"] - appended["start_line"] == 9
    note = (server.home / "workspace" / appended["path"]).read_text().split("\n")
    assert "\n".join(note[appended["start_line"] - 1 : appended["end_line"]]) == summary
