"""How fresh a search is (docs/architecture.md, "Freshness"), and that it never queues
behind another writer's sync.

A search sees at once the files its own process wrote through memdir; other
changes (daily-note appends, other processes, edits by hand) once a full sync ran:
the watcher's, or its own when the last is older than ``index.refresh_seconds``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support_reliability import start_server, stop_server

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
from memdir.tools import call_tool

LAZY = {"index": {"refresh_seconds": 3600}}


@pytest.fixture
def lazy(home: Path) -> Iterator[Memory]:
    with Memory.open(home, embedder=HashEmbedder(), overrides=LAZY) as opened:
        opened.init()
        opened.sync()
        yield opened


def _found(memory: Memory, word: str) -> bool:
    """Whether ``memory_search`` (which refreshes the index first) returns a hit with ``word``."""
    answer = call_tool(memory, "memory_search", {"query": word})
    return not answer.startswith("No memory matched") and f"- {word}" in answer


def test_a_search_sees_its_own_writes_at_once_and_hand_edits_after_a_sync(lazy: Memory) -> None:
    lazy.write_file("memory/plans.md", "# Plans\n\n- quokkaword\n")
    assert _found(lazy, "quokkaword")
    lazy.edit_file("memory/plans.md", "quokkaword", "wombatword")
    assert _found(lazy, "wombatword")
    lazy.delete_file("memory/plans.md")
    assert not _found(lazy, "wombatword")
    (lazy.workspace.root / "memory" / "by-hand.md").write_text("# Hand\n\n- numbatword\n")
    assert not _found(lazy, "numbatword")  # not written through memdir: the next sync
    lazy.sync()
    assert _found(lazy, "numbatword")


def test_another_memory_of_the_process_sees_the_write(home: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder(), overrides=LAZY) as shared:
        shared.init()
        shared.sync()
        with Memory.open(home, "coder", embedder=HashEmbedder(), overrides=LAZY) as coder:
            coder.sync()
            shared.write_file("memory/team.md", "# Team\n\n- quollword\n")
            assert _found(coder, "quollword")  # the global workspace, written by another Memory


HOLD = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], timeout=30)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.rollback()
"""


@pytest.mark.slow
def test_a_search_does_not_wait_for_another_writers_transaction(lazy: Memory) -> None:
    _found(lazy, "warm")  # open the stores
    holder = subprocess.Popen(  # another process, mid-way through a long sync
        [sys.executable, "-c", HOLD, str(lazy.index_path), "3"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        release_at = time.monotonic() + 3
        assert not _found(lazy, "nothingpending")
        assert time.monotonic() < release_at - 1, "the search waited for the other writer"
        lazy.write_file("memory/mine.md", "# Mine\n\n- dingoword\n")
        assert _found(lazy, "dingoword")  # its own write: indexed once the lock is free
        assert time.monotonic() >= release_at - 0.5
    finally:
        holder.communicate(timeout=30)  # waits, and closes its pipe


@pytest.mark.slow
def test_rest_reads_its_writes_under_concurrent_load(tmp_path: Path) -> None:
    server = start_server(tmp_path / "home")
    try:

        def write_then_search(n: int) -> bool:
            with server.client() as http:
                word = f"probe{n}word"
                put = http.put(f"/api/v1/files/memory/p{n}.md", json={"content": f"- {word}\n"})
                assert put.status_code == 200
                hits = http.get("/api/v1/search", params={"query": word}).json()["hits"]
                return any(word in hit["text"] for hit in hits)

        with ThreadPoolExecutor(8) as pool:
            assert all(pool.map(write_then_search, range(40)))
    finally:
        stop_server(server.process)
