"""Every change of a workspace file through memdir is a version: who, what and why.

Real git repositories in temporary homes; real subprocesses for concurrent writers.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.errors import ConfigError, InvalidInputError, NotFoundError
from memdir.history import attributed
from memdir.memory import Memory


def open_memory(home: Path, agent: str | None = None) -> Memory:
    memory = Memory.open(home, agent, embedder=HashEmbedder(), chat_model=None)
    memory.init()
    return memory


def git(home: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(home), *args], capture_output=True, text=True, check=True
    ).stdout


def test_each_write_is_a_version_with_who_what_and_why(home: Path) -> None:
    with open_memory(home, "coder") as memory:
        with attributed(tool="memory_write_file", token="tok1", session="s-9", reason="tidy"):
            memory.write_file("MEMORY.md", "# Memory\n\n- one\n")
        memory.edit_file("MEMORY.md", "one", "two")
        memory.save("The user prefers green tea.")
        memory.append_daily("a plain note line")
        fact = memory.recall("green tea")[0]
        memory.forget(fact_id=fact.fact.id, reason="no longer true")
        memory.write_file("memory/scratch.md", "# Scratch\n")
        memory.delete_file("memory/scratch.md")
        versions = memory.history_versions()
    tools = [v.tool for v in versions]
    assert tools[:7] == [
        "delete_file", "write_file", "forget", "append_daily", "save", "edit_file",
        "memory_write_file",
    ]  # fmt: skip
    first = versions[6]
    assert (first.agent, first.token, first.session, first.reason) == (
        "coder", "tok1", "s-9", "tidy",
    )  # fmt: skip
    assert first.paths == ("MEMORY.md",)
    assert versions[2].reason == "no longer true"
    assert all(v.agent == "coder" for v in versions[:7])
    assert versions[-1].tool == "history"  # the workspace as it was when history began
    # the commits are plain git: the user's own git shows the same history
    log = git(home, "log", "--format=%s")
    assert "memory_write_file: agents/coder/MEMORY.md" in log


def test_index_locks_and_settings_are_not_versioned(home: Path) -> None:
    with open_memory(home) as memory:
        memory.save("The deploy runs on Fridays.")
        memory.search("deploy")
    (home / "memdir.toml").write_text("[search]\nmax_results = 5\n")
    tracked = git(home, "ls-files").split()
    assert tracked
    assert all(p.startswith(("workspace/", ".git")) for p in tracked), tracked
    assert (home / "index").is_dir()
    status = git(home, "status", "--porcelain")
    assert "index/" not in status
    assert "memdir.toml" not in status


def test_restore_and_undo_put_the_bytes_back_and_are_versions(home: Path) -> None:
    original = "# Memory\r\n\n- café ☕ with trailing spaces   \n\n"
    with open_memory(home) as memory:
        memory.write_file("MEMORY.md", original)
        memory.write_file("MEMORY.md", "overwritten by an agent\n")
        undone = memory.undo("MEMORY.md")
        assert (home / "workspace" / "MEMORY.md").read_bytes() == original.encode()
        versions = memory.history_versions("MEMORY.md")
        assert versions[0].tool == "restore"
        assert undone[:12] in (versions[0].reason or "")
        assert versions[1].id == undone
        memory.restore(versions[1].id, "MEMORY.md")  # redo: back to the overwrite
        assert memory.read_file("MEMORY.md") == "overwritten by an agent\n"
        diff = memory.history_diff(versions[0].id, "MEMORY.md")
        assert "-overwritten by an agent" in diff
        assert "+- café ☕" in diff
        assert diff.startswith("diff --git a/MEMORY.md b/MEMORY.md")


def test_an_agent_sees_and_restores_its_own_workspace_only(home: Path) -> None:
    with open_memory(home) as shared, open_memory(home, "coder") as coder:
        shared.write_file("MEMORY.md", "global secret plan\n")
        coder.write_file("MEMORY.md", "coder notes\n")
        global_version = shared.history_versions("MEMORY.md")[0].id
        assert all(
            "global" not in (v.reason or "") and v.agent in ("coder", None)
            for v in coder.history_versions()
        )
        assert coder.history_versions("MEMORY.md")[0].paths == ("MEMORY.md",)
        assert global_version not in {v.id for v in coder.history_versions()}
        with pytest.raises(NotFoundError):
            coder.history_diff(global_version)
        with pytest.raises(InvalidInputError):
            coder.history_versions("global:MEMORY.md")
        with pytest.raises(InvalidInputError):
            coder.history_diff("not-a-version")


def test_edits_made_outside_memdir_become_versions_at_sync(home: Path) -> None:
    with open_memory(home) as memory:
        memory.write_file("MEMORY.md", "- one\n")
        (home / "workspace" / "MEMORY.md").write_text("- one\n- typed in an editor\n")
        (home / "workspace" / "memory").mkdir(exist_ok=True)
        (home / "workspace" / "memory" / "2020-01-01.md").write_text("- old note\n")
        memory.sync()
        last = memory.history_versions()[0]
    assert last.tool == "outside"
    assert set(last.paths) == {"MEMORY.md", "memory/2020-01-01.md"}


def test_consolidation_is_a_version_with_its_summary(home: Path) -> None:
    with open_memory(home) as memory:
        for _ in range(3):
            memory.append_daily("The team decided to ship on Thursdays from now on.")
        result = memory.consolidate()
        versions = memory.history_versions("MEMORY.md")
    if result.written:
        assert versions[0].tool == "consolidate"
        assert "promoted" in (versions[0].reason or "")
    else:  # nothing to promote: then no version either
        assert not versions or versions[0].tool != "consolidate"


def test_without_git_memory_works_and_history_says_what_to_do(
    home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with open_memory(home) as memory:
        memory.write_file("MEMORY.md", "- still saved\n")
        memory.save("Saving works without git.")
        assert memory.read_file("MEMORY.md") == "- still saved\n"
        with pytest.raises(ConfigError, match="install git"):
            memory.history_versions()
    assert not (home / ".git").exists()


def test_history_off_records_nothing(home: Path) -> None:
    memory = Memory.open(
        home, overrides={"history": {"enabled": False}}, embedder=HashEmbedder(), chat_model=None
    )
    with memory:
        memory.init()
        memory.write_file("MEMORY.md", "x\n")
        with pytest.raises(ConfigError, match=r"history\.enabled"):
            memory.history_versions()
    assert not (home / ".git").exists()


WRITER = """
import sys
from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
home, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
    for i in range(count):
        if i % 2:
            memory.append_daily(f"{name} note {i}")
        else:
            memory.save(f"Writer {name} recorded item number {i} today.")
"""


@pytest.mark.slow
def test_processes_writing_at_once_lose_no_version(home: Path) -> None:
    with open_memory(home) as memory:
        memory.write_file("MEMORY.md", "start\n")
    writers, count = 4, 12
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(home), f"w{n}", str(count)])
        for n in range(writers)
    ]
    assert [p.wait(timeout=600) for p in procs] == [0] * writers
    git(home, "fsck", "--strict")
    subjects = git(home, "log", "--format=%s%x09%b").count("Tool: ")
    log = git(home, "log", "--format=%b")
    assert log.count("Tool: save") == writers * count // 2
    assert log.count("Tool: append_daily") == writers * count // 2
    assert subjects >= writers * count + 2
    assert git(home, "status", "--porcelain", "--", "workspace") == ""  # nothing left behind
    with open_memory(home) as memory:  # every write is listed, held ones included
        listed = [v.tool for v in memory.history_versions(limit=500)]
    assert listed.count("save") == writers * count // 2
    assert listed.count("append_daily") == writers * count // 2
    notes = "".join(p.read_text() for p in (home / "workspace" / "memory").glob("*.md"))
    for n in range(writers):
        for i in range(count):
            assert (f"w{n} note {i}" if i % 2 else f"Writer w{n} recorded item number {i}") in notes


def test_a_git_run_by_hand_holding_the_index_is_waited_for(home: Path) -> None:
    with open_memory(home) as memory:
        memory.write_file("MEMORY.md", "- before\n")
        memory.history_versions()  # committed
        held = home / ".git" / "index.lock"
        held.write_text("")  # what a `git add` in progress leaves
        memory.write_file("MEMORY.md", "- while git held the index\n")  # returns at once
        time.sleep(1.0)  # the committer waits and retries meanwhile
        held.unlink()
        memory.history.flush()
        newest = memory.history_versions("MEMORY.md")[0]
    assert newest.tool == "write_file"
    assert "while git held" in git(home, "show", newest.id, "--", "workspace/MEMORY.md")


def test_a_fact_update_by_id_is_a_version(home: Path) -> None:
    with open_memory(home, "coder") as memory:
        saved = memory.save("The standup is at nine.").fact
        assert saved is not None
        with attributed(tool="memory_update_fact", reason="moved"):
            memory.update_fact(saved.id, "The standup is at ten.")
        newest = memory.history_versions()[0]
    assert (newest.tool, newest.reason, newest.agent) == ("memory_update_fact", "moved", "coder")
    assert "+- The standup is at ten." in git(home, "show", newest.id)


def test_inserts_renames_and_checked_writes_are_versions(home: Path) -> None:
    with open_memory(home) as memory:
        memory.write_file("memory/plan.md", "- one\n", create_only=True)
        memory.insert_lines("memory/plan.md", 0, "# Plan")
        sha = memory.read_text("memory/plan.md").sha256
        memory.write_file("memory/plan.md", "# Plan\n- two\n", expected_sha256=sha)
        memory.rename_file("memory/plan.md", "memory/roadmap.md")
        tools = [v.tool for v in memory.history_versions()][:4]
        moved = memory.history_versions()[0]
    assert tools == ["rename_file", "write_file", "insert_lines", "write_file"]
    assert set(moved.paths) == {"memory/plan.md", "memory/roadmap.md"}


def test_a_first_write_into_a_home_not_yet_made_is_a_version(tmp_path: Path) -> None:
    home = tmp_path / "not-yet"  # no folder: the first write creates the home
    with Memory.open(home, "coder", embedder=HashEmbedder(), chat_model=None) as memory:
        memory.write_file("memory/first.md", "# First\n\nthe very first note\n")
        versions = memory.history_versions()
    assert [v.tool for v in versions][:1] == ["write_file"]
    assert versions[0].paths == ("memory/first.md",)


def test_a_write_under_way_is_not_taken_for_an_outside_edit(home: Path) -> None:
    """A sync (the watcher's, a listing's) that runs while this process is writing a file
    leaves that file to the write's own version: no "outside" version of memdir's bytes
    and no empty version after it."""
    with open_memory(home, "alice") as memory:
        memory.write_file("MEMORY.md", "- alice v1\n")
        memory.history.flush()
        path = home / "agents" / "alice" / "MEMORY.md"
        with memory.history.change(tool="write_file") as change:
            path.write_text("- v2\n")  # written, its version not yet handed over
            change.touched("MEMORY.md")
            assert memory.history.pick_up_outside() is False
        (home / "agents" / "alice" / "notes.md").write_text("typed in an editor\n")
        assert memory.history.pick_up_outside() is True  # quiet again: outside edits count
        versions = memory.history_versions()
    tools = [(v.tool, v.paths) for v in versions[:3]]
    assert tools == [
        ("outside", ("notes.md",)), ("write_file", ("MEMORY.md",)), ("write_file", ("MEMORY.md",)),
    ]  # fmt: skip
    assert git(home, "show", "HEAD~1:agents/alice/MEMORY.md") == "- v2\n"
