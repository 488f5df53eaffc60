"""A save is found by the very next search, through every interface, with the watcher off.

An agent that saves and then checks must find what it saved: 100 of 100 times through the
Python API, the CLI, MCP over stdio, MCP over HTTP and the REST API. The homes set
``index.refresh_seconds`` to an hour, so no search runs a full sync after the first one:
only the save's own write path can make the line searchable. Each fact holds a word no
other fact holds, and the search asks for the fact's text.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from support_interfaces import child_env, start_server, stop_server
from typer.testing import CliRunner

from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.cli import app
from memdir.memory import Memory

pytestmark = pytest.mark.slow
ROUNDS = 100
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def fact(i: int) -> str:
    """A statement of six made-up words that no other ``i`` shares."""
    pick = random.Random(i)
    words = ["".join(pick.choices(SYLLABLES, k=3)) for _ in range(6)]
    return f"Remember that {' '.join(words)} ({i})"


def quiet_home(root: Path) -> Path:
    """A home whose searches run no full sync after the first (refresh once an hour)."""
    home = root / "home"
    (home / "workspace").mkdir(parents=True)
    (home / "memdir.toml").write_text("[index]\nrefresh_seconds = 3600\n", encoding="utf-8")
    return home


def first_hit_is(text: str, hit: dict[str, Any]) -> bool:
    return text in hit["text"] and hit["path"].startswith("memory/")


def rounds(
    save: Callable[[str], None], search: Callable[[str], list[dict[str, Any]]], first: int = 0
) -> int:
    found = 0
    for i in range(first, first + ROUNDS):
        save(fact(i))
        hits = search(fact(i))
        found += bool(hits) and first_hit_is(fact(i), hits[0])
    return found


def test_python_api(tmp_path: Path) -> None:
    with Memory.open(quiet_home(tmp_path), embedder=HashEmbedder()) as memory:
        memory.search("warm up")  # the first search of a process syncs everything

        def search(query: str) -> list[dict[str, Any]]:
            return [{"text": h.text, "path": h.path} for h in memory.search(query)]

        assert rounds(lambda text: memory.save(text) and None, search) == ROUNDS


def test_cli(tmp_path: Path) -> None:
    home, runner = quiet_home(tmp_path), CliRunner()
    base = ["--home", str(home), "--set", "embeddings.provider=hash"]

    def save(text: str) -> None:
        assert runner.invoke(app, [*base, "save", text]).exit_code == 0

    def search(query: str) -> list[dict[str, Any]]:
        result = runner.invoke(app, [*base, "search", query, "--json"])
        assert result.exit_code == 0, result.stderr
        hits: list[dict[str, Any]] = json.loads(result.stdout)["hits"]
        return hits

    search("warm up")
    assert rounds(save, search) == ROUNDS


async def mcp_rounds(client: Client) -> int:
    found = 0
    for i in range(ROUNDS):
        saved = await client.call_tool("memory_save", {"content": fact(i)})
        assert not saved.is_error, saved.content
        result = await client.call_tool("memory_search", {"query": fact(i)})
        assert not result.is_error, result.content
        assert isinstance(result.structured_content, dict)
        hits = result.structured_content["hits"]
        found += bool(hits) and first_hit_is(fact(i), hits[0])
    return found


def test_mcp_stdio(tmp_path: Path) -> None:
    home = quiet_home(tmp_path)
    params = StdioServerParameters(
        command=__import__("sys").executable,
        args=["-m", "memdir.interfaces.mcp", "--home", str(home), "--embedder", "hash"],
        env=child_env(),
    )

    async def main() -> int:
        async with Client(params, read_timeout_seconds=60) as client:
            await client.call_tool("memory_search", {"query": "warm up"})
            return await mcp_rounds(client)

    assert anyio.run(main) == ROUNDS


def test_mcp_http_and_rest(tmp_path: Path) -> None:
    server = start_server(quiet_home(tmp_path), "--no-watch")
    try:
        headers = {"Authorization": f"Bearer {server.token}"}

        async def main() -> int:
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                Client(streamable_http_client(server.url + "/mcp", http_client=http)) as client,
            ):
                await client.call_tool("memory_search", {"query": "warm up"})
                return await mcp_rounds(client)

        assert anyio.run(main) == ROUNDS
        with server.client() as api:

            def save(text: str) -> None:
                assert api.post("/api/v1/facts", json={"content": text}).status_code == 201

            def search(query: str) -> list[dict[str, Any]]:
                answer = api.get("/api/v1/search", params={"query": query})
                assert answer.status_code == 200, answer.text
                hits: list[dict[str, Any]] = answer.json()["hits"]
                return hits

            assert rounds(save, search, first=1000) == ROUNDS
    finally:
        stop_server(server.process)
