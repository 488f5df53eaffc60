"""Claude's memory tool over a memdir workspace, with the real ``anthropic`` package.

The six commands answer word for word as the SDK's reference
``BetaLocalFilesystemMemoryTool`` (the same script runs against both); changes are
hash-checked, paths confined, credentials refused with the SDK's ``ToolError``; and the
SDK's own tool runner, its HTTP answered by a scripted ``MockTransport``, remembers
across two processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic", reason="the anthropic extra: pip install 'memdir[anthropic]'")

from anthropic.lib.tools import ToolError
from anthropic.tools import BetaLocalFilesystemMemoryTool

from memdir.embeddings.base import HashEmbedder
from memdir.integrations.anthropic import MemdirMemoryTool
from memdir.memory import Memory

SCRIPT: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/user.md", "file_text": "# User\nname: Ada\n"},
    {"command": "create", "path": "/memories/user.md", "file_text": "again\n"},
    {"command": "view", "path": "/memories/user.md"},
    {"command": "view", "path": "/memories/user.md", "view_range": [2, -1]},
    {"command": "str_replace", "path": "/memories/user.md", "old_str": "Ada", "new_str": "Ada L"},
    {"command": "str_replace", "path": "/memories/user.md", "old_str": "Bob", "new_str": "x"},
    {"command": "insert", "path": "/memories/user.md", "insert_line": 1, "insert_text": "a\n"},
    {"command": "insert", "path": "/memories/user.md", "insert_line": 1, "insert_text": "a"},
    {"command": "str_replace", "path": "/memories/user.md", "old_str": "a\n", "new_str": "b\n"},
    {"command": "insert", "path": "/memories/user.md", "insert_line": 99, "insert_text": "z"},
    {"command": "create", "path": "/memories/work/plan.md", "file_text": "ship v2\n"},
    {"command": "view", "path": "/memories"},
    {"command": "rename", "path": "", "old_path": "/memories/work/plan.md",
     "new_path": "/memories/user.md"},
    {"command": "rename", "old_path": "/memories/work/plan.md", "new_path": "/memories/done.md"},
    {"command": "rename", "old_path": "/memories/work/gone.md", "new_path": "/memories/x.md"},
    {"command": "view", "path": "/memories/done.md"},
    {"command": "delete", "path": "/memories/done.md"},
    {"command": "delete", "path": "/memories/done.md"},
    {"command": "view", "path": "/memories/nothing.md"},
    {"command": "view", "path": "/memories/no/such/folder"},
    {"command": "delete", "path": "/memories/no-folder"},
    {"command": "delete", "path": "/memories"},
    {"command": "view", "path": "/etc/passwd"},
]  # fmt: skip


def outcome(tool: Any, command: dict[str, Any]) -> str:
    arguments = {key: value for key, value in command.items() if value != ""}
    try:
        return "ok: " + str(tool.call(arguments))
    except ToolError as exc:
        return "error: " + str(exc)


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    (home / "workspace").mkdir(parents=True)
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as opened:
        yield opened


def test_every_command_answers_as_the_sdk_reference_tool(memory: Memory, tmp_path: Path) -> None:
    reference = BetaLocalFilesystemMemoryTool(str(tmp_path / "reference"))
    ours = MemdirMemoryTool(memory)
    for command in SCRIPT:
        expected, got = outcome(reference, command), outcome(ours, command)
        assert got == expected, command
    assert (memory.workspace.root / "memories" / "user.md").read_text() == (
        (tmp_path / "reference" / "memories" / "user.md").read_text()
    )


def test_files_are_searchable_markdown_and_paths_stay_inside(memory: Memory) -> None:
    tool = MemdirMemoryTool(memory)
    tool.call({"command": "create", "path": "/memories/prefs.md", "file_text": "Likes oolong\n"})
    hits = memory.search("oolong").hits
    assert [hit.citation for hit in hits] == ["memories/prefs.md:1-1"]
    for path in ("/memories/../workspace.md", "/memories/a/../../x.md", "/memoriesx/a.md"):
        with pytest.raises(ToolError):
            tool.call({"command": "create", "path": path, "file_text": "x"})
    with pytest.raises(ToolError, match=r"name the file with '\.md', e\.g\. /memories/notes\.md"):
        tool.call({"command": "create", "path": "/memories/notes.xml", "file_text": "x"})
    assert sorted(p.name for p in memory.workspace.root.iterdir()) == ["memories"]


def test_a_credential_is_refused_with_the_sdks_error(memory: Memory) -> None:
    tool = MemdirMemoryTool(memory)
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    with pytest.raises(ToolError, match="AWS access key"):
        tool.call({"command": "create", "path": "/memories/k.md", "file_text": f"key {key}\n"})
    tool.call({"command": "create", "path": "/memories/k.md", "file_text": "no key\n"})
    with pytest.raises(ToolError, match="AWS access key"):
        tool.call({"command": "insert", "path": "/memories/k.md", "insert_line": 0,
                   "insert_text": key})  # fmt: skip
    assert (memory.workspace.root / "memories" / "k.md").read_text() == "no key\n"


INSERTER = """
import sys, time
from pathlib import Path
from memdir.embeddings.base import HashEmbedder
from memdir.integrations.anthropic import MemdirMemoryTool
from memdir.memory import Memory

home, go, worker, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
    tool = MemdirMemoryTool(memory)
    while not go.exists():
        time.sleep(0.002)
    for n in range(count):
        command = "insert" if n % 2 else "str_replace"
        if command == "insert":
            tool.call({"command": "insert", "path": "/memories/log.md", "insert_line": 1,
                       "insert_text": f"w{worker}-{n:03d}"})
        else:
            tool.call({"command": "str_replace", "path": "/memories/log.md",
                       "old_str": "# Log\\n", "new_str": f"# Log\\nw{worker}-{n:03d}\\n"})
"""


@pytest.mark.slow
def test_two_processes_changing_one_file_lose_nothing(home: Path, tmp_path: Path) -> None:
    """Both read, then change the text they read: the reference tool's read-modify-write
    would lose changes; here a change that lost the race reads again."""
    (home / "workspace").mkdir(parents=True)
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        MemdirMemoryTool(memory).call(
            {"command": "create", "path": "/memories/log.md", "file_text": "# Log\n"}
        )
    go, count = tmp_path / "go", 100
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", INSERTER, str(home), str(go), str(n), str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    go.touch()
    for worker in workers:
        _, err = worker.communicate(timeout=240)
        assert worker.returncode == 0, err
    lines = (home / "workspace" / "memories" / "log.md").read_text().splitlines()
    assert lines[0] == "# Log"
    assert sorted(lines[1:]) == sorted(f"w{w}-{n:03d}" for w in range(2) for n in range(count))


RUNNER = Path(__file__).with_name("anthropic_run.py")


def run_process(home: Path, tool_input: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(home), json.dumps(tool_input)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_the_sdk_tool_runner_remembers_across_two_processes(home: Path) -> None:
    (home / "workspace").mkdir(parents=True)
    first = run_process(
        home,
        {"command": "create", "path": "/memories/user.md",
         "file_text": "The user prefers green tea.\n"},
    )  # fmt: skip
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert first["result"] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "File created successfully at: /memories/user.md",
    }
    assert first["final"] == "done"
    second = run_process(home, {"command": "view", "path": "/memories/user.md"})
    content = json.dumps(second["result"]["content"])
    assert "Here's the content of /memories/user.md with line numbers" in content
    assert "The user prefers green tea." in content
    assert not second["result"].get("is_error")
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        assert memory.search("green tea").hits[0].citation == "memories/user.md:1-1"
