"""MCP over streamable HTTP, mounted at /mcp of the live REST server, with the token."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support_interfaces import LiveServer

from memdir.tools import TOOLS

pytestmark = pytest.mark.slow


def run_http_session(url: str, token: str, body: Any) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await body(client)

    return anyio.run(main)


def text_of(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def test_tools_over_http(server: LiveServer) -> None:
    async def body(client: Client) -> dict[str, Any]:
        return {
            "tools": (await client.list_tools()).tools,
            "write": await client.call_tool(
                "memory_write_file", {"path": "http.md", "content": "via http\n"}
            ),
            "read": await client.call_tool("memory_read_file", {"path": "http.md"}),
            "error": await client.call_tool("memory_read_file", {"path": "/etc/x.md"}),
        }

    out = run_http_session(server.url + "/mcp", server.token, body)
    assert [t.name for t in out["tools"]] == [spec.name for spec in TOOLS]
    assert not out["write"].is_error
    assert text_of(out["read"]) == "via http\n"
    assert out["error"].is_error
    assert (server.home / "workspace" / "http.md").read_text() == "via http\n"


def test_agent_query_parameter_scopes_mcp_over_http(server: LiveServer) -> None:
    async def body(client: Client) -> types.CallToolResult:
        return await client.call_tool(
            "memory_write_file", {"path": "MEMORY.md", "content": "web agent\n"}
        )

    result = run_http_session(server.url + "/mcp?agent=web", server.token, body)
    assert not result.is_error, text_of(result)
    assert (server.home / "agents" / "web" / "MEMORY.md").read_text() == "web agent\n"


def test_mcp_over_http_refuses_a_wrong_token(server: LiveServer) -> None:
    async def body(client: Client) -> None:
        await client.list_tools()

    # The SDK reports the 401 as an error group; test_http_api checks the 401 itself.
    with pytest.raises(BaseExceptionGroup):
        run_http_session(server.url + "/mcp", "not-the-token", body)
