"""A token for alice acts as alice only: every REST route and every MCP tool, over a live server.

alice and bob each have a token (``memdir token create --agent``); bob's workspace and
the global workspace hold marker words. With alice's token, every operation of
``/openapi.json`` is called for bob (``?agent=bob``, ``/memory/bob/...``), for the
global workspace (``/memory/global/...``) and with admin switches: each is refused with
403. Called without ``?agent=``, each acts on alice: no answer carries bob's words, and
nothing outside ``agents/alice/`` changes. Over MCP, every tool runs in a session opened
with alice's token; a session cannot be continued for bob, with bob's token, or (opened
by the admin for alice) for bob.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support_reliability import LiveServer, snapshot, start_server, stop_server

from memdir.access import AccessTokens
from memdir.tools import TOOLS

pytestmark = pytest.mark.slow

BOB_WORDS = ("zanzibarbob", "bobsprivateplan")
GLOBAL_NOTE = "memory/2026-01-01.md"
PATH_SAMPLES = {
    "path": "memory/alice-notes.md",
    "fact_id": "f-000000000000",
    "name": "memory_list_files",
    "conversation": "c1",
    "version": "0000000",
}
BODIES: dict[tuple[str, str], Any] = {
    ("PUT", "/api/v1/files/{path}"): {"content": "# Alice\n\nalice was here\n"},
    ("PATCH", "/api/v1/files/{path}"): {"old_text": "alice was here", "new_text": "alice again"},
    ("POST", "/api/v1/facts"): {"content": "Alice prefers green tea.", "category": "preference"},
    ("PUT", "/api/v1/prompt/files/{path}"): {"enabled": True},
    ("POST", "/api/v1/tools/{name}"): {},
    ("POST", "/api/v1/history/{version}/restore"): {"path": "MEMORY.md"},
}
QUERIES: dict[tuple[str, str], dict[str, str]] = {
    ("GET", "/api/v1/search"): {"query": "keeps the plan", "scope": "agent"},
    ("GET", "/api/v1/facts/recall"): {"query": "bob plan"},
    ("DELETE", "/api/v1/facts/{fact_id}"): {"reason": "a test"},
}
TOOL_ARGUMENTS: dict[str, dict[str, Any]] = {
    "memory_search": {"query": "who keeps the plan", "scope": "agent"},
    "memory_get": {"path": "agent:bob:memory/plan.md"},
    "memory_save": {"content": "Alice likes the number seven."},
    "memory_recall": {"query": "bob plan"},
    "memory_forget": {"query": "bob plan", "reason": "a test"},
    "memory_list_files": {"prefix": ""},
    "memory_read_file": {"path": "agent:bob:memory/plan.md"},
    "memory_write_file": {"path": "memory/alice-mcp.md", "content": "# Alice\n\nfrom mcp\n"},
    "memory_edit_file": {
        "path": "memory/alice-mcp.md",
        "old_text": "from mcp",
        "new_text": "from mcp again",
    },
    "memory_finish_ritual": {},
    "memory_context": {},
    "memory_set_prompt_file": {"path": "SOUL.md", "enabled": True},
    "memory_list_facts": {},
    "memory_recent": {"days": 30},
    "memory_history": {},
    "memory_diff": {"version": "0000000"},
    "memory_restore": {"path": "memory/alice-mcp.md"},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = start_server(tmp_path_factory.mktemp("access") / "home")
    yield live
    stop_server(live.process)
    assert "Traceback" not in live.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def tokens(server: LiveServer) -> dict[str, str]:
    store = AccessTokens(server.home)
    made = {agent: store.create(agent, f"{agent}'s test token")[0] for agent in ("alice", "bob")}
    with server.client(made["bob"]) as bob:
        written = bob.put(
            "/api/v1/files/memory/plan.md",
            json={"content": f"# Plan\n\n- {BOB_WORDS[0]} keeps {BOB_WORDS[1]}\n"},
        )
        assert written.status_code == 200, written.text
        assert bob.post(
            "/api/v1/facts", json={"content": f"Bob's plan is {BOB_WORDS[1]}"}
        ).is_success
    with server.client() as admin:
        assert admin.put(f"/api/v1/files/{GLOBAL_NOTE}", json={"content": "# Global\n"}).is_success
    with server.client(made["alice"]) as alice:
        assert alice.put(
            "/api/v1/files/IDENTITY.md", json={"content": "# Identity\n\nalicemarker\n"}
        ).is_success
    return made


def operations(server: LiveServer) -> list[tuple[str, str]]:
    spec = httpx.get(server.url + "/openapi.json", timeout=10).json()
    found = [(m.upper(), path) for path, item in spec["paths"].items() for m in item]
    found = [(m, p) for m, p in found if p.startswith("/api/")]
    assert len(found) >= 20, found
    return found


def concrete(path: str, agent: str = "alice") -> str:
    for name, value in {**PATH_SAMPLES, "agent": agent}.items():
        path = path.replace("{" + name + "}", value)
    return path


def call(client: httpx.Client, method: str, path: str, agent: str | None) -> httpx.Response:
    params = dict(QUERIES.get((method, path), {}))
    if agent is not None:
        params["agent"] = agent
    url = concrete(path, agent or "alice")
    body = BODIES.get((method, path))
    return client.request(method, url, params=params, json=body if body is not None else None)


def protected_state(home: Path) -> dict[str, str]:
    """Every file alice's token must not change: the global workspace, bob, sessions."""
    return {
        **{f"workspace/{k}": v for k, v in snapshot(home / "workspace").items()},
        **{f"agents/bob/{k}": v for k, v in snapshot(home / "agents" / "bob").items()},
    }


def test_every_route_refuses_alice_as_bob_or_as_the_global_workspace(
    server: LiveServer, tokens: dict[str, str]
) -> None:
    before = protected_state(server.home)
    refused: list[str] = []
    with server.client(tokens["alice"]) as alice:
        for method, path in operations(server):
            attempts = [call(alice, method, path, "bob")]
            if "{agent}" in path:
                attempts.append(alice.request(method, concrete(path, "global")))
            for answer in attempts:
                assert answer.status_code == 403, (method, path, answer.status_code, answer.text)
                assert "belongs to agent 'alice'" in answer.json()["detail"], answer.text
                refused.append(f"{method} {path}")
        switch = alice.post("/api/v1/index/sync", params={"all_agents": "true"})
        assert switch.status_code == 403, switch.text
        assert "admin token" in switch.json()["detail"]
    assert len(refused) >= 22
    assert protected_state(server.home) == before


def test_every_route_without_an_agent_acts_on_alice_only(
    server: LiveServer, tokens: dict[str, str]
) -> None:
    before = protected_state(server.home)
    statuses = {}
    with server.client(tokens["alice"]) as alice:
        for method, path in operations(server):
            for agent in (None, "alice"):
                answer = call(alice, method, path, agent)
                statuses[(method, path, agent)] = answer.status_code
                assert answer.status_code != 403, (method, path, answer.text)
                assert answer.status_code < 500, (method, path, answer.text)
                for word in BOB_WORDS:
                    assert word not in answer.text, (method, path, answer.text[:300])
        assert alice.get("/api/v1/agents").json() == {"agents": ["alice"]}
        assert alice.get("/api/v1/access").json() == {
            "token": tokens["alice"].split("_")[1], "agent": "alice", "admin": False,
        }  # fmt: skip
        prompt = alice.get("/api/v1/prompt").json()["prompt"]
        assert "alicemarker" in prompt
        assert BOB_WORDS[1] not in prompt
    assert protected_state(server.home) == before
    assert (server.home / "agents" / "alice" / "memory" / "alice-notes.md").is_file()
    ok = [key for key, status in statuses.items() if status < 400]
    assert len(ok) >= 30, statuses


def mcp_session(url: str, token: str, body: Any) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await body(client)

    return anyio.run(main)


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_every_tool_in_alices_session_acts_on_alice_only(
    server: LiveServer, tokens: dict[str, str]
) -> None:
    assert sorted(TOOL_ARGUMENTS) == sorted(tool.name for tool in TOOLS)
    before = protected_state(server.home)

    async def body(client: Client) -> dict[str, Any]:
        results = {}
        for tool in TOOLS:
            results[tool.name] = await client.call_tool(tool.name, TOOL_ARGUMENTS[tool.name])
        resource = await client.read_resource("memdir://workspace/IDENTITY.md")
        prompt = await client.get_prompt("system_prompt", {})
        return {"tools": results, "resource": resource, "prompt": prompt}

    out = mcp_session(server.url + "/mcp", tokens["alice"], body)
    for name, result in out["tools"].items():
        for word in BOB_WORDS:
            assert word not in text_of(result), (name, text_of(result))
            assert word not in json.dumps(result.structured_content or {}), name
    assert out["tools"]["memory_read_file"].is_error
    assert not out["tools"]["memory_write_file"].is_error, text_of(
        out["tools"]["memory_write_file"]
    )
    resource_text = out["resource"].contents[0].text
    assert "alicemarker" in resource_text
    prompt_text = out["prompt"].messages[0].content.text
    assert "alicemarker" in prompt_text
    assert BOB_WORDS[1] not in prompt_text
    assert protected_state(server.home) == before
    assert (server.home / "agents" / "alice" / "memory" / "alice-mcp.md").is_file()


def test_an_mcp_session_for_bob_with_alices_token_is_refused(
    server: LiveServer, tokens: dict[str, str]
) -> None:
    answer = initialize(server, tokens["alice"], agent="bob")
    assert answer.status_code == 403, answer.text
    assert "belongs to agent 'alice'" in answer.json()["detail"]


INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "access-test", "version": "1"}},
}  # fmt: skip
LIST_FILES = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "memory_list_files", "arguments": {}}}  # fmt: skip
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def initialize(server: LiveServer, token: str, agent: str | None = None) -> httpx.Response:
    params = {"agent": agent} if agent else {}
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    return httpx.post(
        server.url + "/mcp", params=params, json=INITIALIZE, headers=headers, timeout=30
    )


def in_session(
    server: LiveServer, token: str, session_id: str, agent: str | None = None
) -> httpx.Response:
    params = {"agent": agent} if agent else {}
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}", "Mcp-Session-Id": session_id,
               "Mcp-Protocol-Version": "2025-06-18"}  # fmt: skip
    return httpx.post(
        server.url + "/mcp", params=params, json=LIST_FILES, headers=headers, timeout=30
    )


def open_session(server: LiveServer, token: str, agent: str | None = None) -> str:
    answer = initialize(server, token, agent)
    assert answer.status_code == 200, answer.text
    session_id = answer.headers["mcp-session-id"]
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}", "Mcp-Session-Id": session_id,
               "Mcp-Protocol-Version": "2025-06-18"}  # fmt: skip
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    params = {"agent": agent} if agent else {}
    assert httpx.post(server.url + "/mcp", params=params, json=note, headers=headers).is_success
    return session_id


def test_a_session_opened_as_alice_never_runs_as_bob(
    server: LiveServer, tokens: dict[str, str]
) -> None:
    session_id = open_session(server, tokens["alice"])
    assert in_session(server, tokens["alice"], session_id).status_code == 200
    for token, agent in ((tokens["alice"], "bob"), (tokens["bob"], None), (tokens["bob"], "bob")):
        answer = in_session(server, token, session_id, agent)
        assert answer.status_code == 403, answer.text
        for word in BOB_WORDS:
            assert word not in answer.text
    admin_session = open_session(server, server.token, agent="alice")
    assert in_session(server, server.token, admin_session, "alice").status_code == 200
    switched = in_session(server, server.token, admin_session, "bob")
    assert switched.status_code == 403
    assert "bound to 'alice'" in switched.json()["detail"]
    dropped = in_session(server, server.token, admin_session)  # no ?agent=: the global workspace
    assert dropped.status_code == 403


def test_a_revoked_token_is_refused_at_once(server: LiveServer) -> None:
    store = AccessTokens(server.home)
    token, record = store.create("carol")
    with server.client(token) as carol:
        assert carol.get("/api/v1/files").status_code == 200
        store.revoke(record.id)
        refused = carol.get("/api/v1/files")
    assert refused.status_code == 401
    assert "revoked" in refused.json()["detail"]


def test_tokens_are_kept_hashed_and_private(server: LiveServer, tokens: dict[str, str]) -> None:
    stored = (server.home / "tokens.json").read_text(encoding="utf-8")
    for token in tokens.values():
        assert token not in stored
        assert token.split("_", 2)[2] not in stored
    assert (server.home / "tokens.json").stat().st_mode & 0o777 == 0o600
