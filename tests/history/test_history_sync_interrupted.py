"""A sync killed during its merge leaves git's conflict markers in the files and the merge
open; the next command that records a version finishes it as the sync would have."""

from __future__ import annotations

import subprocess
from pathlib import Path

from typer.testing import CliRunner

from memdir.interfaces.cli import app

runner = CliRunner()
FAST = ["--set", "embeddings.provider=hash"]


def cli(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), *FAST, *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def write_memory(home: Path, line: str) -> None:
    cli(home, "files", "write", "MEMORY.md", "--content", f"# Memory\n\n- {line}\n")


def test_a_merge_left_open_by_a_killed_sync_is_finished_without_markers(tmp_path: Path) -> None:
    remote, a, b = tmp_path / "remote.git", tmp_path / "a", tmp_path / "b"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    write_memory(a, "base")
    cli(a, "sync", "--remote", str(remote))
    cli(b, "sync", "--remote", str(remote))
    write_memory(a, "the deploy runs on Fridays")
    cli(a, "sync", "--remote", str(remote))
    write_memory(b, "the deploy runs on Mondays")
    # What a sync killed between git's merge and its own resolution leaves behind:
    git = ["git", "-C", str(b), "-c", "user.name=x", "-c", "user.email=x@x"]
    subprocess.run([*git, "fetch", "-q", str(remote), "memdir"], check=True)
    merged = subprocess.run([*git, "merge", "-q", "FETCH_HEAD"], capture_output=True)
    assert merged.returncode != 0  # a conflict: MEMORY.md holds the markers now
    assert "<<<<<<<" in (b / "workspace" / "MEMORY.md").read_text("utf-8")

    listed = cli(b, "history", "MEMORY.md")  # reading the history records outside edits

    assert "sync" in listed
    memory = (b / "workspace" / "MEMORY.md").read_text("utf-8")
    assert memory == "# Memory\n\n- the deploy runs on Mondays\n"
    copies = list((b / "workspace").glob("MEMORY.conflict-*.md"))
    assert len(copies) == 1
    assert "Fridays" in copies[0].read_text("utf-8")
    recorded = subprocess.run([*git, "show", "HEAD:workspace/MEMORY.md"], capture_output=True)
    assert b"<<<<<<<" not in recorded.stdout
    assert not (b / ".git" / "MERGE_HEAD").exists()
    cli(b, "sync", "--remote", str(remote))
    cli(a, "sync", "--remote", str(remote))
    assert "<<<<<<<" not in (a / "workspace" / "MEMORY.md").read_text("utf-8")
