"""Isolation: an agent reaches its own workspace and the global files it inherits, no more.

Path traversal and symlink escapes are tried through every interface: the
Python tools, the CLI (typer's runner on the real command) and, in
test_rel_mcp.py and test_rel_rest.py, MCP and REST.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support_reliability import snapshot
from typer.testing import CliRunner

from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.cli import app
from memdir.memory import Memory
from memdir.tools import ToolError, call_tool

ESCAPES = [
    "../outside/secret.md", "../../etc/passwd.md", "/etc/passwd.md", "~/secret.md",
    "C:/Windows/x.md", "memory\\..\\..\\x.md", "memory/../../../x.md", "escape/secret.md",
    "memory/leak.md", "memory/\x00.md", "\\\\server\\share\\x.md", "file:///etc/passwd.md",
    "../agents/bob/MEMORY.md", "../../agents/bob/memory/private.md", "..", "memory/dirlink/x.md",
]  # fmt: skip


TOOL_ESCAPES: list[tuple[str, dict[str, object]]] = [
    ("memory_read_file", {}),
    ("memory_get", {"from_line": 1}),
    ("memory_write_file", {"content": "pwned"}),
    ("memory_edit_file", {"old_text": "TOP", "new_text": "pwned"}),
]


@pytest.fixture
def alice(home: Path, tmp_path: Path) -> Iterator[Memory]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("TOP-SECRET\n", encoding="utf-8")
    with Memory.open(home, "bob", embedder=HashEmbedder()) as bob:
        bob.init()
        bob.write_file("memory/private.md", "# Bob\n\nbob-only walrus plan\n")
        bob.sync()
    with Memory.open(home, embedder=HashEmbedder()) as shared:
        shared.init()
        shared.write_file("USER.md", "# User\n\nThe user is called Sam.\n")
    with Memory.open(home, "alice", embedder=HashEmbedder()) as memory:
        memory.init()
        root = memory.workspace.root
        (root / "escape").symlink_to(outside)
        (root / "memory" / "leak.md").symlink_to(outside / "secret.md")
        (root / "memory" / "dirlink").symlink_to(home / "agents" / "bob")
        yield memory


def test_tools_never_leave_the_workspace(alice: Memory, tmp_path: Path) -> None:
    before = snapshot(tmp_path)
    for path in ESCAPES:
        for name, extra in TOOL_ESCAPES:
            with pytest.raises(ToolError) as caught:
                call_tool(alice, name, {"path": path, **extra})
            assert "TOP-SECRET" not in str(caught.value)
            assert "walrus" not in str(caught.value)
    for prefix in ("../", "/etc", "../bob", "escape/"):
        try:
            listed = call_tool(alice, "memory_list_files", {"prefix": prefix})
        except ToolError:
            continue
        assert "secret" not in listed
        assert "private" not in listed
    after = snapshot(tmp_path)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert all("/index/" in f"/{k}" for k in changed), changed


def test_agents_search_only_their_own_and_the_global_files(alice: Memory) -> None:
    found = call_tool(alice, "memory_search", {"query": "walrus plan"})
    assert "bob-only" not in found
    assert call_tool(alice, "memory_search", {"query": "TOP-SECRET"}).startswith("Nothing ")
    with pytest.raises(ToolError, match="cross_agent"):
        call_tool(alice, "memory_search", {"query": "walrus", "scope": "all"})
    assert "Sam" in call_tool(alice, "memory_read_file", {"path": "USER.md"})  # inherited
    with pytest.raises(ToolError):
        call_tool(alice, "memory_read_file", {"path": "memory/private.md"})


def test_cross_agent_search_works_only_when_enabled(home: Path, alice: Memory) -> None:
    overrides = {"search": {"cross_agent": True}}
    with Memory.open(home, "alice", embedder=HashEmbedder(), overrides=overrides) as memory:
        memory.sync(all_agents=True)
        found = call_tool(memory, "memory_search", {"query": "walrus plan", "scope": "all"})
        assert "bob-only walrus plan" in found


def test_discovery_skips_symlinks_that_leave_the_workspace(alice: Memory) -> None:
    report = alice.sync()
    indexed = {hit.path for hit in alice.search("TOP-SECRET walrus", min_score=0.0).hits}
    assert not any("leak" in p or "dirlink" in p or "escape" in p for p in indexed)
    assert all("secret" not in path for path, _ in report.skipped)


@pytest.mark.parametrize("path", [p for p in ESCAPES if "\x00" not in p])
def test_the_cli_refuses_escapes(home: Path, alice: Memory, path: str) -> None:
    runner = CliRunner()
    base = ["--home", str(home), "--agent", "alice"]
    for command in (["get", path], ["files", "read", path],
                    ["files", "write", path, "--content", "pwned"]):  # fmt: skip
        result = runner.invoke(app, [*base, *command])
        assert result.exit_code != 0, (command, result.output)
        assert "TOP-SECRET" not in result.output
        assert "walrus" not in result.output
        assert "Traceback" not in result.output
    assert (home.parent / "outside" / "secret.md").read_text(encoding="utf-8") == "TOP-SECRET\n"


def test_the_cli_refuses_bad_agent_ids(home: Path) -> None:
    runner = CliRunner()
    for agent in ("../bob", "Bob", "a/b", ".hidden", "x" * 65, "", "bob\n"):
        result = runner.invoke(app, ["--home", str(home), "--agent", agent, "files", "list"])
        if agent == "":
            continue  # an empty id means the global workspace
        assert result.exit_code != 0, agent
        assert "invalid agent id" in result.output
    assert not (home / "agents" / ".hidden").exists()
