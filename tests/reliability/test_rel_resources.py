"""A server's resources are bounded: open workspaces (an LRU that closes what it evicts) and
MCP sessions (a cap per token, a short idle timeout)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support_reliability import LiveServer, start_server, stop_server

from memdir.access import AccessTokens
from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.http.memories import AgentMemories
from memdir.memory import Memory

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "limits-test", "version": "1"},
    },
}


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc")
def test_open_workspaces_are_bounded_and_evicted_ones_are_closed(home: Path) -> None:
    memories = AgentMemories(
        lambda agent: Memory.open(home, agent, embedder=HashEmbedder()), max_open=3
    )
    with memories.lease("a0") as first:
        first.write_file("memory/a0.md", "# a0\n\nkept open while leased\n")
        baseline = None
        for number in range(1, 25):
            with memories.lease(f"a{number}") as memory:
                memory.write_file("memory/n.md", f"# n\n\nnote {number}\n")
                assert memory.search(f"note {number}").hits
            if number == 6:
                first.history.flush()  # a version being committed runs git: its pipes
                baseline = open_files()
        assert baseline is not None
        first.history.flush()  # the home's versions committed: no git process is running
        assert open_files() <= baseline + 2  # flat: each eviction closed its files
        assert len(memories) == 3
        assert first in memories.opened()  # leased: never closed under its user
        assert first.search("kept open").hits
        assert memories.evicted == 24 - 2
    memories.close()


def test_more_leases_than_room_are_all_kept_then_trimmed(home: Path) -> None:
    memories = AgentMemories(lambda agent: Memory.open(home, agent, embedder=None), max_open=2)
    leased = [memories.acquire(f"b{n}") for n in range(5)]
    assert len(memories) == 5  # all in use: none may be closed
    for number in range(5):
        memories.release(f"b{number}")
    assert len(memories) == 2
    assert set(memories.opened()) <= set(leased)
    memories.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    home = tmp_path_factory.mktemp("limits") / "home"
    home.mkdir(parents=True)
    (home / "memdir.toml").write_text(
        "[server]\nmcp_sessions_per_token = 2\nmcp_idle_seconds = 2\nmax_open_workspaces = 4\n",
        encoding="utf-8",
    )
    live = start_server(home)
    yield live
    stop_server(live.process)


def initialize(server: LiveServer, token: str) -> httpx.Response:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    return httpx.post(server.url + "/mcp", json=INITIALIZE, headers=headers, timeout=30)


def in_session(server: LiveServer, token: str, session_id: str, method: str) -> httpx.Response:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}", "Mcp-Session-Id": session_id,
               "Mcp-Protocol-Version": "2025-06-18"}  # fmt: skip
    ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    body = ping if method == "POST" else None
    return httpx.request(method, server.url + "/mcp", json=body, headers=headers, timeout=30)


@pytest.mark.slow
def test_a_token_holds_a_few_mcp_sessions_and_idle_ones_close(server: LiveServer) -> None:
    alice, _ = AccessTokens(server.home).create("alice")
    first = initialize(server, alice)
    second = initialize(server, alice)
    assert first.status_code == second.status_code == 200, first.text
    refused = initialize(server, alice)
    assert refused.status_code == 429, refused.text
    assert refused.headers["retry-after"] == "2"
    assert "mcp_sessions_per_token = 2" in refused.json()["detail"]
    assert initialize(server, server.token).status_code == 200  # another token is not locked out
    closed = in_session(server, alice, first.headers["mcp-session-id"], "DELETE")
    assert closed.status_code < 300, closed.text
    assert initialize(server, alice).status_code == 200
    time.sleep(3.5)  # every session of alice has been idle for longer than 2 s
    stale = in_session(server, alice, second.headers["mcp-session-id"], "POST")
    assert stale.status_code == 404, stale.text
    for _ in range(2):
        assert initialize(server, alice).status_code == 200


@pytest.mark.slow
def test_the_server_keeps_at_most_its_workspaces_open(server: LiveServer) -> None:
    def fds() -> int:
        return len(os.listdir(f"/proc/{server.process.pid}/fd"))

    with server.client() as admin:
        for number in range(40):
            written = admin.put(
                "/api/v1/files/memory/x.md",
                params={"agent": f"w{number}"},
                json={"content": f"# x\n\nworkspace {number}\n"},
            )
            assert written.status_code == 200, written.text
            answer = admin.get("/api/v1/search", params={"agent": f"w{number}", "query": "x"})
            assert answer.status_code == 200, answer.text
            if number == 8:  # max_open_workspaces = 4: full since the fifth
                filled = fds()
    assert fds() <= filled + 4
