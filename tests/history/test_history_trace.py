"""The trace of searches and recalls: what came back, for whom, within its retention."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memdir.embeddings.base import HashEmbedder
from memdir.history import attributed
from memdir.memory import Memory

TRACED = {"trace": {"enabled": True, "max_entries": 10}}


def test_searches_and_recalls_are_traced_with_the_caller_and_kept_to_the_limit(
    home: Path,
) -> None:
    with Memory.open(home, overrides=TRACED, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        fact = memory.save("The user's dog is called Biscuit.").fact
        assert fact is not None
        with attributed(tool="memory_search", token="tok9"):
            found = memory.search("what is the dog called")
        memory.recall("dog's name")
        entries = memory.trace.entries(5)
        assert [e["kind"] for e in entries[:2]] == ["recall", "search"]
        search = entries[1]
        assert search["query"] == "what is the dog called"
        assert (search["tool"], search["token"]) == ("memory_search", "tok9")
        assert [h["cited"] for h in search["hits"]] == [h.citation for h in found.hits]
        assert search["hits"][0]["breakdown"]
        assert search["hits"][0]["text"] == found.hits[0].text[:200]
        assert entries[0]["hits"][0]["fact"] == fact.id
        for n in range(30):
            memory.search(f"query number {n}")
        lines = memory.trace.path.read_text().splitlines()
        assert len(lines) <= 12  # the limit and a fifth more, at most
        assert memory.trace.entries(1)[0]["query"] == "query number 29"
    assert not (home / "workspace" / "index").exists()
    assert (
        "trace-"
        not in subprocess.run(
            ["git", "-C", str(home), "ls-files"], capture_output=True, text=True, check=True
        ).stdout
    )


def test_the_trace_is_off_by_default_and_the_cli_says_how_to_turn_it_on(home: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        memory.search("anything")
        assert not memory.trace.path.exists()
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "--home", str(home), "--set", "embeddings.provider=none",
         "trace"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "trace.enabled = true" in done.stdout


def test_a_torn_line_is_skipped_and_counted_by_the_cli(home: Path) -> None:
    with Memory.open(home, overrides=TRACED, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        memory.search("first")
        memory.recall("second")
        with memory.trace.path.open("a", encoding="utf-8") as file:
            file.write('{"kind": "search", "query": "cut sh')  # a crash mid-write
        read = memory.trace.read(10, "search")
        assert [e["query"] for e in read.entries] == ["first"]
        assert read.skipped == 1
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "--home", str(home), "--set", "embeddings.provider=none",
         "--set", "trace.enabled=true", "trace", "--kind", "recall"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "recall 'second'" in done.stdout
    assert "'first'" not in done.stdout
    assert "skipped 1 unreadable line" in done.stdout
