"""History on every interface: a real MCP client over stdio, a live REST server, the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from live_server import child_env, start_server, stop_server
from memdir.access import AccessTokens
from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory

pytestmark = pytest.mark.slow
AGENT_CODER = ("--agent", "coder", "--embedder", "hash")
ORIGINAL = "# MEMORY\n\n- The user's dog is called Biscuit.\n- Deploys run on Fridays.  \n"


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_undo_of_an_agents_overwrite_through_mcp_restores_bytes_and_prompt(home: Path) -> None:
    with Memory.open(home, "coder", embedder=HashEmbedder()) as memory:
        memory.init()
        memory.write_file("MEMORY.md", ORIGINAL)

    async def script(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["overwrite"] = await client.call_tool(
            "memory_write_file", {"path": "MEMORY.md", "content": "- nothing to remember\n"}
        )
        out["prompt_after_overwrite"] = await client.get_prompt("system_prompt")
        out["history"] = await client.call_tool("memory_history", {"path": "MEMORY.md"})
        last = out["history"].structured_content["versions"][0]["id"]
        out["diff"] = await client.call_tool("memory_diff", {"version": last})
        out["undo"] = await client.call_tool(
            "memory_restore", {"path": "MEMORY.md", "reason": "the overwrite lost facts"}
        )
        out["prompt_after_undo"] = await client.get_prompt("system_prompt")
        out["after"] = await client.call_tool("memory_history", {"path": "MEMORY.md"})
        out["bad"] = await client.call_tool("memory_diff", {"version": "not hex"})
        return out

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir.interfaces.mcp", "--home", str(home), *AGENT_CODER],
        env=child_env(),
    )

    async def main() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            return await script(client)

    out = anyio.run(main)
    assert not out["undo"].is_error, text_of(out["undo"])
    path = home / "agents" / "coder" / "MEMORY.md"
    assert path.read_bytes() == ORIGINAL.encode()  # byte for byte
    assert "Biscuit" not in out["prompt_after_overwrite"].messages[0].content.text
    assert "Biscuit" in out["prompt_after_undo"].messages[0].content.text
    overwrite = out["history"].structured_content["versions"][0]
    assert overwrite["tool"] == "memory_write_file"
    assert overwrite["agent"] == "coder"
    assert "-- The user's dog is called Biscuit." in out["diff"].structured_content["diff"]
    restored = out["after"].structured_content["versions"][0]
    assert restored["tool"] == "memory_restore"
    assert restored["reason"] == "the overwrite lost facts"
    assert out["bad"].is_error
    assert "version" in text_of(out["bad"])


def test_rest_history_diff_and_restore_scoped_by_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    server = start_server(home)
    try:
        token, record = AccessTokens(home).create("alice", "alice's laptop")
        with server.client() as admin:
            made = admin.put("/api/v1/files/MEMORY.md", json={"content": "global plan\n"})
            assert made.is_success
        with server.client(token) as alice:
            first = alice.put("/api/v1/files/MEMORY.md", json={"content": "- alice v1\n"})
            assert first.status_code == 200, first.text
            assert alice.put("/api/v1/files/MEMORY.md", json={"content": "- v2\n"}).is_success
            listed = alice.get("/api/v1/history", params={"path": "MEMORY.md", "limit": 5})
            assert listed.status_code == 200, listed.text
            versions = listed.json()["versions"]
            assert len(versions) == 2, versions
            assert set(versions[0]) >= {"id", "time", "paths", "agent", "tool", "reason"}
            assert versions[0]["paths"] == ["MEMORY.md"]
            assert versions[0]["agent"] == "alice"
            assert versions[0]["tool"] == "PUT /api/v1/files/MEMORY.md"
            assert versions[0]["token"] == record.id  # its id, never the secret
            assert len(versions[0]["token"]) < len(token)
            everything = alice.get("/api/v1/history").json()["versions"]
            assert all("global" not in str(v) for v in everything)
            diff = alice.get(f"/api/v1/history/{versions[0]['id']}/diff").json()
            assert diff["id"] == versions[0]["id"]
            assert "+- v2" in diff["diff"]
            back = alice.post(
                f"/api/v1/history/{versions[1]['id']}/restore", json={"path": "MEMORY.md"}
            )
            assert back.json() == {"path": "MEMORY.md", "restored_from": versions[1]["id"]}
            assert alice.get("/api/v1/files/MEMORY.md").json()["content"] == "- alice v1\n"
            with server.client() as admin:
                global_versions = admin.get("/api/v1/history").json()["versions"]
            hidden = alice.get(f"/api/v1/history/{global_versions[0]['id']}/diff")
            assert hidden.status_code == 404, hidden.text
            bad = alice.get("/api/v1/history/xyz/diff")
            assert bad.status_code == 422
            other = alice.get("/api/v1/history", params={"agent": "bob"})
            assert other.status_code == 403
        via_mcp = mcp_over_http(server.url + "/mcp", token)
        assert not via_mcp.is_error, text_of(via_mcp)
        with server.client(token) as alice:
            newest = alice.get("/api/v1/history", params={"limit": 1}).json()["versions"][0]
        assert newest["tool"] == "memory_write_file"
        assert newest["token"] == record.id
        assert newest["agent"] == "alice"
        # no session: this client speaks MCP's sessionless protocol (2026-07-28)
    finally:
        stop_server(server.process)


def mcp_over_http(url: str, token: str) -> types.CallToolResult:
    async def main() -> types.CallToolResult:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await client.call_tool(
                "memory_write_file", {"path": "memory/mcp.md", "content": "- over MCP\n"}
            )

    return anyio.run(main)


def test_cli_history_diff_undo(home: Path) -> None:
    def memdir(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "memdir", "--home", str(home),
             "--set", "embeddings.provider=none", *args],
            capture_output=True, text=True, env=child_env(), timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    memdir("init")
    memdir("files", "write", "MEMORY.md", "--content", "- first\n")
    memdir("files", "write", "MEMORY.md", "--content", "- second\n")
    listed = memdir("history", "MEMORY.md")
    assert listed.count("write_file") == 2
    assert "undid version" in memdir("undo", "MEMORY.md", "--reason", "wrong")
    assert (home / "workspace" / "MEMORY.md").read_text() == "- first\n"
    newest = memdir("history", "MEMORY.md", "--limit", "1")
    assert "memdir undo" in newest
    assert "why: wrong" in newest
    version = newest.split()[0]
    assert "+- first" in memdir("diff", version, "MEMORY.md")
