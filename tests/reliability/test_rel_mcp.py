"""The stdio MCP server under garbage: no crash, no traceback to the caller, no write.

One real client session (the SDK's ``Client`` over a subprocess) sends a long
list of hostile calls to a server bound to agent ``alice``; a second test
speaks raw JSON-RPC lines, malformed ones included, to the same entry point.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from support_reliability import child_env, workspace_snapshot

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
from memdir.tools import MAX_CONTENT_CHARS

pytestmark = pytest.mark.slow
SERVER = [sys.executable, "-m", "memdir.interfaces.mcp", "--embedder", "hash", "--agent", "alice"]

GARBAGE: list[tuple[str, dict[str, Any]]] = [
    ("memory_teleport", {}),
    ("", {}),
    ("memory_search", {}),
    ("memory_search", {"query": ""}),
    ("memory_search", {"query": None}),
    ("memory_search", {"query": ["a", "b"]}),
    ("memory_search", {"query": "x" * 5000}),
    ("memory_search", {"query": "ok", "max_results": -1}),
    ("memory_search", {"query": "ok", "max_results": 10**30}),
    ("memory_search", {"query": "ok", "scope": "all"}),
    ("memory_search", {"query": "ok", "scope": "../bob"}),
    ("memory_search", {"query": "ok", "unexpected": 1}),
    ("memory_get", {"path": "../bob/memory/private.md"}),
    ("memory_get", {"path": "MEMORY.md", "from_line": 0}),
    ("memory_get", {"path": "MEMORY.md", "from_line": 10**9}),
    ("memory_get", {"path": {"nested": "MEMORY.md"}}),
    ("memory_read_file", {"path": "../../agents/bob/memory/private.md"}),
    ("memory_read_file", {"path": "/etc/passwd"}),
    ("memory_read_file", {"path": "escape/secret.md"}),
    ("memory_read_file", {"path": "memory/\u0000.md"}),
    ("memory_write_file", {"path": "../x.md", "content": "pwned"}),
    ("memory_write_file", {"path": "escape/new.md", "content": "pwned"}),
    ("memory_write_file", {"path": "notes.txt", "content": "pwned"}),
    ("memory_write_file", {"path": "memory/big.md", "content": "x" * (MAX_CONTENT_CHARS + 1)}),
    ("memory_write_file", {"path": "memory/x.md", "content": 42}),
    ("memory_write_file", {"path": "memory/x.md"}),
    ("memory_edit_file", {"path": "MEMORY.md", "old_text": "", "new_text": "x"}),
    ("memory_edit_file", {"path": "MEMORY.md", "old_text": "not there at all", "new_text": "x"}),
    ("memory_edit_file", {"path": "../x.md", "old_text": "a", "new_text": "b"}),
    ("memory_save", {"content": ""}),
    ("memory_save", {"content": "line one\nline two"}),
    ("memory_save", {"content": "my password: hunter2!"}),
    ("memory_save", {"content": "use token ghp_" + "a1B2c3D4" * 5}),
    ("memory_save", {"content": "x" * 5000}),
    ("memory_save", {"content": "fine", "importance": 99}),
    ("memory_save", {"content": "fine", "category": "NOT A CATEGORY"}),
    ("memory_save", {"content": "sneaky <!-- fact:x --> marker"}),
    ("memory_recall", {"query": "x", "as_of": "not a date"}),
    ("memory_recall", {"query": "x", "limit": 0}),
    ("memory_forget", {"query": "x"}),
    ("memory_forget", {"fact_id": "f1", "query": "x", "reason": "both"}),
    ("memory_forget", {"fact_id": "no-such-fact", "reason": "gone"}),
    ("memory_list_files", {"prefix": "../"}),
    ("memory_list_files", {"prefix": 7}),
]


def seed_home(home: Path, outside: Path) -> None:
    outside.mkdir(parents=True)
    (outside / "secret.md").write_text("TOP-SECRET\n", encoding="utf-8")
    with Memory.open(home, "bob", embedder=HashEmbedder()) as bob:
        bob.init()
        bob.write_file("memory/private.md", "# Bob\n\nbob-only walrus plan\n")
    with Memory.open(home, "alice", embedder=HashEmbedder()) as alice:
        alice.init()
        alice.write_file("MEMORY.md", "# Memory\n\n- alice likes tea\n")
        (alice.workspace.root / "escape").symlink_to(outside)


async def garbage_session(client: Client) -> dict[str, Any]:
    out: dict[str, Any] = {"results": []}
    for name, arguments in GARBAGE:
        try:
            result = await client.call_tool(name, arguments)
        except MCPError as exc:  # a protocol-level rejection is also a clean answer
            out["results"].append((name, arguments, True, str(exc)))
            continue
        text = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
        out["results"].append((name, arguments, result.is_error, text))
    for uri in ("memdir://workspace/../../agents/bob/MEMORY.md", "memdir://workspace/escape/secret.md",
                "file:///etc/passwd", "memdir://workspace/%2e%2e/x.md"):  # fmt: skip
        try:
            await client.read_resource(uri)
            out.setdefault("resources_read", []).append(uri)
        except MCPError as exc:
            out.setdefault("resources_refused", []).append(str(exc))
    after = await client.call_tool("memory_read_file", {"path": "MEMORY.md"})
    out["alive"] = after
    return out


def run_session(home: Path, body: Any) -> Any:
    params = StdioServerParameters(
        command=SERVER[0], args=[*SERVER[1:], "--home", str(home)], env=child_env()
    )

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=60) as client:
            return await body(client)

    return anyio.run(main)


def test_garbage_calls_are_refused_cleanly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seed_home(home, tmp_path / "outside")
    before = workspace_snapshot(home)
    out = run_session(home, garbage_session)
    for name, arguments, is_error, text in out["results"]:
        shown = f"{name}({str(arguments)[:80]})"
        assert is_error, f"{shown} was accepted: {text[:200]}"
        assert "Traceback" not in text, shown
        assert 'File "' not in text, shown
        assert "TOP-SECRET" not in text, shown
        assert "walrus" not in text, shown
        assert "internal error" not in text, f"{shown}: {text}"  # only MemdirErrors expected
    assert "resources_read" not in out, out.get("resources_read")
    assert not out["alive"].is_error
    changed = {
        k for k in set(before) | set(workspace_snapshot(home))
        if before.get(k) != workspace_snapshot(home).get(k)
    }  # fmt: skip
    assert changed == set(), f"a rejected call wrote {changed}"
    assert (tmp_path / "outside" / "secret.md").read_text(encoding="utf-8") == "TOP-SECRET\n"


def talk(home: Path, lines: list[str], last_id: int) -> dict[Any, Any]:
    """Send raw lines to a stdio server; collect answers until ``last_id`` is answered."""
    process = subprocess.Popen(
        [*SERVER, "--home", str(home)], env=child_env(), text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    answers: dict[Any, Any] = {}
    try:
        process.stdin.write("\n".join(lines) + "\n")
        process.stdin.flush()
        with _deadline(process, 60):
            for line in process.stdout:
                message = json.loads(line)
                answers[message.get("id")] = message
                if message.get("id") == last_id:
                    break
    finally:
        process.stdin.close()
        with _deadline(process, 30):
            rest = process.stdout.read()  # answers still in flight, then EOF
        process.stdout.close()
        process.wait(timeout=30)
    for line in rest.splitlines():
        message = json.loads(line)
        answers.setdefault(message.get("id"), message)
    return answers


class _deadline:
    """Kill ``process`` if the block takes longer than ``seconds``."""

    def __init__(self, process: subprocess.Popen[str], seconds: float) -> None:
        self.timer = threading.Timer(seconds, process.kill)

    def __enter__(self) -> None:
        self.timer.start()

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()


def test_malformed_json_rpc_never_kills_the_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seed_home(home, tmp_path / "outside")
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "fuzz", "version": "0"}}}  # fmt: skip
    lines = [
        json.dumps(init),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "{not json",
        "[]",
        "null",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": "garbage"}),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "memory_read_file", "arguments": ["MEMORY.md"]},
            }
        ),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}),
        "\x00\x01\x02",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "memory_read_file", "arguments": {"path": "MEMORY.md"}},
            }
        ),
    ]
    answers = talk(home, lines, last_id=5)
    assert all("Traceback" not in json.dumps(a) for a in answers.values())
    assert "alice likes tea" in json.dumps(answers[5]["result"])
    for request_id in (3, 4):
        assert request_id in answers, f"request {request_id} got no answer"
        answer = answers[request_id]
        assert "error" in answer or answer["result"].get("isError"), answer
    # id 2 (params not an object) is dropped by the MCP SDK without an answer; it must
    # at least not be taken for a success.
    assert "result" not in answers.get(2, {})
