"""Every size memdir accepts is bounded, and going over it is a clear error, not a write.

| input | limit | where |
| file content written | 2 MB (UTF-8 bytes) | workspace.atomic.MAX_FILE_BYTES |
| file indexed | index.max_file_bytes (5 MB) | index.sync, skipped with a reason |
| tool content / old / new text | 2,000,000 chars | tools.MAX_CONTENT_CHARS |
| search query | 2,000 (tools, REST); 10,000 read (Python) | tools, routes, search |
| max_results | 50 (tools), 100 (REST), 1,000 (Python) | tools, routes, SearchOptions |
| fact text / forget reason | 1,000 / 300 chars | facts.safety |
| recall query / limit | 2,000 chars / 1-100 | facts.recall |
| path / path component | 1,024 chars / 255 bytes | workspace.paths |
| agent id / session id | 64 / 128 chars | workspace.paths, context.sessions |
| REST request body | 8 MB | interfaces.http.app.MAX_BODY_BYTES |
| one read (whole file, or a get's lines) | 2 MB | workspace.workspace.MAX_READ_BYTES |
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from support_reliability import workspace_snapshot
from typer.testing import CliRunner

from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError
from memdir.facts import MAX_FACT_CHARS
from memdir.facts.safety import MAX_REASON_CHARS
from memdir.interfaces.cli import app as cli
from memdir.interfaces.http import create_app
from memdir.memory import Memory
from memdir.tools import MAX_CONTENT_CHARS, ToolError, call_tool
from memdir.workspace.atomic import MAX_FILE_BYTES
from memdir.workspace.paths import MAX_NAME_BYTES, MAX_PATH_CHARS

TOKEN = "k" * 32


def hash_opener(home: Path) -> Callable[[str | None], Memory]:
    return lambda agent: Memory.open(home, agent, embedder=HashEmbedder())


def refuses(memory: Memory, tool: str, arguments: dict[str, object], fragment: str) -> None:
    before = workspace_snapshot(memory.home)
    with pytest.raises(ToolError) as caught:
        call_tool(memory, tool, arguments)
    assert fragment in str(caught.value), str(caught.value)
    assert workspace_snapshot(memory.home) == before, f"{tool} wrote despite refusing"


def test_tool_limits(memory: Memory) -> None:
    memory.write_file("memory/a.md", "# A\n\nalpha\n")
    refuses(memory, "memory_search", {"query": "q" * 2001}, "at most 2000")
    refuses(memory, "memory_search", {"query": "q", "max_results": 51}, "less than or equal to 50")
    refuses(memory, "memory_save", {"content": "f" * (MAX_FACT_CHARS + 1)}, "at most 1000")
    long_reason = {"query": "alpha", "reason": "r" * (MAX_REASON_CHARS + 1)}
    refuses(memory, "memory_forget", long_reason, f"at most {MAX_REASON_CHARS}")
    too_many_chars = {"path": "memory/big.md", "content": "x" * (MAX_CONTENT_CHARS + 1)}
    refuses(memory, "memory_write_file", too_many_chars, "at most")
    too_many_bytes = {"path": "memory/big.md", "content": "é" * (MAX_FILE_BYTES // 2 + 1)}
    refuses(memory, "memory_write_file", too_many_bytes, "2 MB")
    refuses(memory, "memory_get", {"path": "memory/a.md", "lines": 10_001}, "10000")
    refuses(memory, "memory_read_file", {"path": "m/" * 600 + "x.md"}, "at most 512")
    refuses(memory, "memory_recall", {"query": "q", "limit": 51}, "less than or equal to 50")


def test_an_edit_cannot_grow_a_file_past_the_limit(memory: Memory) -> None:
    memory.write_file("memory/a.md", "seed\n" * 10)
    refuses(memory, "memory_edit_file", {"path": "memory/a.md", "old_text": "seed",
            "new_text": "y" * 300_000, "replace_all": True}, "over the limit")  # fmt: skip


def test_python_api_limits(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="2 MB"):
        memory.write_file("memory/big.md", "x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(InvalidInputError, match="2 MB"):
        memory.append_daily("x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(InvalidInputError, match="longer than"):
        memory.read_file("a" * MAX_PATH_CHARS + ".md")
    with pytest.raises(InvalidInputError, match=f"{MAX_NAME_BYTES} bytes"):
        memory.write_file("é" * 200 + ".md", "x")
    with pytest.raises(InvalidInputError, match="out of range"):
        memory.search("alpha", max_results=1001)
    with pytest.raises(InvalidInputError, match="1 to 100"):
        memory.recall("alpha", limit=101)
    with pytest.raises(InvalidInputError, match="under 2,000"):
        memory.recall("q" * 2001)
    with pytest.raises(InvalidInputError, match="session id"):
        memory.session("s" * 129)
    assert memory.search("alpha " * 100_000).hits == ()  # a huge query is read up to a bound
    assert not (memory.workspace.root / "memory" / "big.md").exists()


def test_oversized_files_are_skipped_by_the_index(home: Path) -> None:
    overrides = {"index": {"max_file_bytes": 10_000}}
    with Memory.open(home, embedder=HashEmbedder(), overrides=overrides) as memory:
        memory.init()
        memory.write_file("memory/big.md", "word " * 5_000)
        memory.write_file("memory/small.md", "# Small\n\nword\n")
        report = memory.sync()
    assert dict(report.skipped)["memory/big.md"].startswith("larger than the 10000-byte limit")


def test_rest_limits(home: Path) -> None:
    app = create_app(home, token=TOKEN, open_memory=hash_opener(home))
    with TestClient(
        app, base_url="http://127.0.0.1", headers={"Authorization": f"Bearer {TOKEN}"}
    ) as api:
        assert api.get("/api/v1/search", params={"query": "q" * 2001}).status_code == 422
        assert (
            api.get("/api/v1/search", params={"query": "q", "max_results": 101}).status_code == 422
        )
        assert api.post("/api/v1/facts", json={"content": "f" * 1001}).status_code == 422
        big = api.put("/api/v1/files/memory/big.md", json={"content": "x" * (9 * 1024 * 1024)})
        assert big.status_code == 413
        assert big.json()["detail"].startswith("the request body is larger than")
        forget = api.delete("/api/v1/facts/f1", params={"reason": "r" * (MAX_REASON_CHARS + 1)})
        assert forget.status_code == 422
        long_agent = api.get("/api/v1/files", params={"agent": "a" * 65})
        assert long_agent.status_code == 400
    assert not (home / "workspace" / "memory" / "big.md").exists()


def test_reads_are_bounded_and_say_how_to_read_in_parts(memory: Memory) -> None:
    folder = memory.workspace.root / "memory"
    folder.mkdir(exist_ok=True)
    (folder / "big.md").write_text("".join(f"line {n} " + "x" * 90 + "\n" for n in range(30_000)))
    (folder / "wide.md").write_text("# Wide\n" + "y" * (MAX_FILE_BYTES + 10) + "\nend\n")
    with pytest.raises(InvalidInputError, match=r"memory_get and a line range") as whole:
        memory.read_file("memory/big.md")
    assert "memdir get PATH --from N --lines M" in str(whole.value)
    assert "GET /api/v1/files/PATH?from=N&lines=M" in str(whole.value)
    part = memory.get("memory/big.md", from_line=29_999, lines=5)
    assert (part.start_line, part.end_line, part.total_lines) == (29_999, 30_000, 30_000)
    assert part.content.startswith("line 29998 ")
    with pytest.raises(InvalidInputError, match=r"ask for at most \d+ lines from line 1"):
        memory.get("memory/big.md")
    refuses(memory, "memory_get", {"path": "memory/wide.md", "lines": 1, "from_line": 2}, "alone")
    assert memory.get("memory/wide.md", from_line=3).content == "end"
    with pytest.raises(ToolError, match="memory_get and a line range"):
        call_tool(memory, "memory_read_file", {"path": "memory/big.md"})


def test_rest_and_cli_reads_are_bounded(home: Path) -> None:
    folder = home / "workspace" / "memory"
    folder.mkdir(parents=True)
    (folder / "big.md").write_text("z" * 50 + "\n" + ("w" * 99 + "\n") * 25_000)
    app = create_app(home, token=TOKEN, open_memory=hash_opener(home))
    with TestClient(
        app, base_url="http://127.0.0.1", headers={"Authorization": f"Bearer {TOKEN}"}
    ) as api:
        whole = api.get("/api/v1/files/memory/big.md")
        assert whole.status_code == 422
        assert "from=N&lines=M" in whole.json()["detail"]
        part = api.get("/api/v1/files/memory/big.md", params={"from": 1, "lines": 1})
        assert part.json()["content"] == "z" * 50
    result = CliRunner().invoke(cli, ["--home", str(home), "files", "read", "memory/big.md"])
    assert result.exit_code == 1
    assert "--from N --lines M" in result.output
