"""Two homes on two machines (two folders and a bare remote) converge through sync."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError
from memdir.memory import Memory

pytestmark = pytest.mark.slow


def workspace_files(home: Path) -> dict[str, bytes]:
    root = home / "workspace"
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def work(memory: Memory, name: str, start: int, count: int, acknowledged: list[str]) -> None:
    """``count`` saves and edits; each acknowledged line is remembered."""
    for n in range(start, start + count):
        if n % 4 == 3:  # an edit of MEMORY.md: the other home edits it too
            line = f"- {name} decided point {n} in the plan"
            current = memory.read_file("MEMORY.md") if n > 3 else ""
            memory.write_file("MEMORY.md", current.rstrip("\n") + "\n" + line + "\n")
        else:
            line = f"Home {name} learned fact number {n} about project {name}{n}."
            memory.save(line)
        acknowledged.append(line)


def test_two_homes_sync_three_times_and_end_identical_with_every_line(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    homes = {name: tmp_path / name for name in ("a", "b")}
    memories = {
        name: Memory.open(home, embedder=HashEmbedder(), chat_model=None)
        for name, home in homes.items()
    }
    acknowledged: dict[str, list[str]] = {"a": [], "b": []}
    rng = random.Random(35)
    conflicts: list[str] = []
    try:
        for memory in memories.values():
            memory.init()
        per_round = [67, 67, 66]  # 200 saves and edits per home
        done = 0
        order: list[str] = []
        for count in per_round:
            for name, memory in memories.items():
                work(memory, name, done, count, acknowledged[name])
            done += count
            order = rng.sample(sorted(memories), 2)
            for name in order:
                conflicts += memories[name].sync_remote(str(remote)).conflicts
        memories[order[0]].sync_remote(str(remote))  # the first of the last round catches up
        files = {name: workspace_files(home) for name, home in homes.items()}
        assert files["a"] == files["b"]
        text = "\n".join(content.decode() for content in files["a"].values())
        for name in ("a", "b"):
            missing = [line for line in acknowledged[name] if line not in text]
            assert missing == [], f"{len(missing)} lines of home {name} lost: {missing[:3]}"
        assert conflicts  # both homes edited MEMORY.md: the other side's text is kept beside
        assert all(".conflict-" in c for c in conflicts)
        for memory in memories.values():  # the index followed: both find the other's lines
            for wanted in ("project a5.", "project b6.", "b decided point 199"):
                found = memory.search(wanted.strip("."), max_results=100, include_history=True)
                hits = found.hits
                assert any(wanted in h.text for h in hits), wanted
        version = memories["a"].history_versions(limit=200)
        assert any(v.tool == "sync" for v in version)
    finally:
        for memory in memories.values():
            memory.close()


def test_a_bad_remote_is_refused_in_the_callers_terms(home: Path, tmp_path: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        with pytest.raises(InvalidInputError, match="git URL"):
            memory.sync_remote("--upload-pack=evil")
        before = (home / "workspace" / "USER.md").read_bytes()
        with pytest.raises(Exception, match="push"):
            memory.sync_remote(str(tmp_path / "no-such-remote.git"))
        assert (home / "workspace" / "USER.md").read_bytes() == before
