"""Every citation a search returns resolves, in the same session, to exactly the cited lines.

The agent `coder`, the agent `writer` and the global workspace each hold a daily note of the
same date, so a bare path would be ambiguous: hits from outside the session's own workspace
are cited as `global:...` or `agent:<id>:...`, and `memory_get` reads that file.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from support_interfaces import child_env, start_server, stop_server

from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError, InvalidPathError
from memdir.memory import Memory
from memdir.tools import ToolError, call_tool, call_tool_result
from memdir.workspace.markup import strip_markers

DAY = "memory/2026-11-20.md"
NOTES: dict[str | None, str] = {
    None: (
        "# 2026-11-20\n\n"
        "- The billing database is PostgreSQL 16 on the primary cluster.\n"
        "- The staging cluster for billing runs in eu-west-1.\n"
        "- Billing invoices are archived every night.\n"
    ),
    "coder": (
        "# 2026-11-20\n\n"
        "- coder deploys the billing service on Fridays.\n"
        "- The billing tests need a staging database. <!-- memdir:fact id=f-aaaaaaaaaa "
        "cat=fact imp=5 at=2026-11-20T10:00:00Z -->\n"
    ),
    "writer": "# 2026-11-20\n\n- writer drafted the billing newsletter for the staging team.\n",
}
QUERIES = ["billing", "staging cluster", "billing database", "deploys billing"]
SCOPES = ["agent", "global", "all"]


def seed(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "memdir.toml").write_text("[search]\ncross_agent = true\nmin_score = 0.0\n")
    for agent, text in NOTES.items():
        with Memory.open(home, agent, embedder=HashEmbedder()) as memory:
            memory.write_file(DAY, text)
    (home / "workspace" / "memory" / "2026-11-19.md").write_text(
        "# 2026-11-19\n\n- Only the global workspace has a note of this day about billing.\n"
    )


def split_citation(citation: str) -> tuple[str, int, int]:
    path, lines = citation.rsplit(":", 1)
    start, end = lines.split("-")
    return path, int(start), int(end)


def cited_text(text: str) -> str:
    return "\n".join(strip_markers(line) for line in text.split("\n"))


@pytest.fixture
def coder(home: Path) -> Iterator[Memory]:
    seed(home)
    with Memory.open(home, "coder", embedder=HashEmbedder()) as memory:
        yield memory


@pytest.mark.parametrize("scope", SCOPES)
def test_every_citation_reads_back_the_hit_through_the_tools(coder: Memory, scope: str) -> None:
    seen: dict[str, str] = {}
    for query in QUERIES:
        found = call_tool_result(
            coder, "memory_search", {"query": query, "maxResults": 20, "scope": scope}
        )
        assert found.data is not None
        for hit in found.data["hits"]:
            path, start, end = split_citation(hit["citation"])
            assert path == hit["path"]
            got = call_tool_result(
                coder, "memory_get", {"filePath": path, "from": start, "lines": end - start + 1}
            )
            assert got.data is not None
            assert got.data["citation"] == hit["citation"]
            assert cited_text(got.data["text"]) == hit["text"]
            assert "<!--" not in hit["text"]
            assert seen.setdefault(hit["citation"], hit["text"]) == hit["text"]
    prefixes = {citation.split("memory/")[0] for citation in seen}
    expected = {"agent": {"", "global:"}, "global": {"global:"}, "all": {"", "global:"}}
    assert expected[scope] <= prefixes
    if scope == "all":
        assert "agent:writer:" in prefixes


def test_no_two_hits_share_a_citation_across_workspaces(coder: Memory) -> None:
    coder.sync(all_agents=True)
    results = coder.search("billing staging", max_results=50, scope="all")
    citations = [hit.citation for hit in results.hits]
    assert len(citations) == len(set(citations))
    assert {hit.source for hit in results.hits} == {"global", "agent:coder", "agent:writer"}
    for hit in results.hits:  # one path per hit: the citation's, prefixed for elsewhere
        prefix = "" if hit.source == "agent:coder" else f"{hit.source}:"
        assert hit.path.startswith(prefix)
        assert not hit.path[len(prefix) :].startswith(("global:", "agent:"))
        assert hit.citation == f"{hit.path}:{hit.start_line}-{hit.end_line}"


def test_plain_path_reads_own_file_then_falls_back_to_the_global_one(coder: Memory) -> None:
    assert "coder deploys" in coder.read_file(DAY)
    assert "PostgreSQL 16" in coder.read_file(f"global:{DAY}")
    assert "newsletter" in coder.read_file(f"agent:writer:{DAY}")
    only_global = coder.get("memory/2026-11-19.md", from_line=3, lines=1)
    assert only_global.path == "global:memory/2026-11-19.md"
    assert only_global.content.startswith("- Only the global workspace")
    assert coder.get(f"agent:coder:{DAY}").path == DAY  # its own prefix: its own file
    assert coder.file_info(f"global:{DAY}").path == f"global:{DAY}"


def test_other_workspaces_are_read_only_and_cross_agent_reads_need_the_setting(
    coder: Memory, home: Path
) -> None:
    with pytest.raises(InvalidPathError, match="a session writes only its own"):
        coder.write_file(f"global:{DAY}", "overwritten")
    with pytest.raises(ToolError, match="a session writes only its own"):
        call_tool(coder, "memory_edit_file", {"path": f"agent:writer:{DAY}", "old_text": "a",
                                              "new_text": "b"})  # fmt: skip
    assert "PostgreSQL 16" in (home / "workspace" / DAY).read_text()
    (home / "memdir.toml").write_text("[search]\ncross_agent = false\n")
    with Memory.open(home, "coder", embedder=HashEmbedder()) as strict:
        assert "PostgreSQL" in strict.read_file(f"global:{DAY}")
        with pytest.raises(InvalidInputError, match=r"set search\.cross_agent = true"):
            strict.read_file(f"agent:writer:{DAY}")
    with Memory.open(home, embedder=HashEmbedder()) as shared:
        shared.write_file(f"global:{DAY}", shared.read_file(DAY))  # its own prefix is fine
    with pytest.raises(InvalidPathError, match="agent:<id>:<path>"):
        coder.read_file("agent:writer")


@pytest.mark.slow
def test_mcp_client_round_trip_in_an_agent_session(home: Path) -> None:
    seed(home)
    server = ["-m", "memdir.interfaces.mcp", "--home", str(home), "--embedder", "hash"]
    params = StdioServerParameters(
        command=sys.executable, args=[*server, "--agent", "coder"], env=child_env()
    )

    async def session() -> list[tuple[dict[str, Any], dict[str, Any]]]:
        pairs = []
        async with Client(params, read_timeout_seconds=30) as client:
            for query in QUERIES:
                found = await client.call_tool("memory_search", {"query": query, "scope": "all"})
                assert found.structured_content is not None
                for hit in found.structured_content["hits"]:
                    path, start, end = split_citation(hit["citation"])
                    got = await client.call_tool(
                        "memory_get", {"path": path, "from_line": start, "lines": end - start + 1}
                    )
                    assert got.structured_content is not None
                    pairs.append((hit, got.structured_content))
        return pairs

    pairs = anyio.run(session)
    assert len(pairs) >= 8
    for hit, got in pairs:
        assert got["citation"] == hit["citation"]
        assert cited_text(got["text"]) == hit["text"]
    assert any(hit["citation"].startswith("global:") for hit, _ in pairs)


@pytest.mark.slow
def test_rest_round_trip_in_an_agent_session(home: Path) -> None:
    seed(home)
    server = start_server(home, "--no-watch")
    try:
        with server.client() as api:
            checked = 0
            for query in QUERIES:
                found = api.get(
                    "/api/v1/search", params={"query": query, "agent": "coder", "scope": "all"}
                ).json()
                for hit in found["hits"]:
                    path, start, end = split_citation(hit["citation"])
                    got = api.get(
                        f"/api/v1/files/{path}",
                        params={"agent": "coder", "from": start, "lines": end - start + 1},
                    )
                    assert got.status_code == httpx.codes.OK, got.text
                    assert got.json()["path"] == path
                    assert cited_text(got.json()["content"]) == hit["text"]
                    checked += 1
            assert checked >= 8
    finally:
        stop_server(server.process)
