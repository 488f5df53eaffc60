"""SIGKILL at random points of every write path: nothing completed is lost or torn.

Each test runs ``crash_worker.py``: a fork server that kills many children in the
middle of appends, fact saves, syncs, guarded rewrites, compactions and
extractions on one home. Afterwards the files must hold every operation that was
reported done, whole; no rewrite may be half applied; no temp file may be
visible to discovery; re-syncing must give the same search results as a fresh
rebuild; and rebuilding the facts from the notes must give the same facts.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from crash_worker import append_text, big_version, memory_version
from support_reliability import (
    fact_rows,
    fresh_index_content,
    fresh_rebuild_hits,
    leftover_temp_files,
    run_worker,
    synced_hits,
    synced_index_content,
)

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
from memdir.workspace import discover_memory_files
from memdir.workspace.daily import repair_interrupted_appends

pytestmark = pytest.mark.slow
KILLS = 24


def crash(home: Path, mode: str, seed: int = 7) -> list[tuple[int, int]]:
    home.mkdir(parents=True, exist_ok=True)
    out = run_worker("crash_worker.py", mode, str(home), str(KILLS), str(seed))
    assert f"killed {KILLS}" in out
    log = home / f"done-{mode}.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    done = [(int(a), int(b)) for a, b in (line.split() for line in lines if line.count(" ") == 1)]
    assert done, f"no {mode} operation completed before the kills; the test proves nothing"
    return done


def today_note(home: Path) -> str:
    """The note as memdir reads it: an append cut by a kill is cut off before any read."""
    repair_interrupted_appends(home / "workspace")
    return (home / "workspace" / "memory" / f"{dt.date.today().isoformat()}.md").read_text(
        encoding="utf-8"
    )


def assert_index_recovers(home: Path, tmp_path: Path) -> None:
    recovered = synced_index_content(home)
    fresh = fresh_index_content(home, tmp_path / "fresh")
    assert recovered[0] == fresh[0], "re-synced files differ from a fresh rebuild"
    assert recovered[1] == fresh[1], "re-synced units or vectors differ from a fresh rebuild"
    assert recovered[2] == fresh[2], "re-synced full-text rows differ from a fresh rebuild"
    # The same searches find something. (Not always the same spans: equal scores are still
    # ordered by unit id in places, which an index built append by append numbers otherwise
    # than a rebuild; the units, vectors and terms above are the same.)
    synced, rebuilt = synced_hits(home), fresh_rebuild_hits(home, tmp_path / "fresh2")
    for query, hits in synced.items():
        assert bool(hits) == bool(rebuilt[query]), query


def assert_facts_rebuild_equal(home: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.sync()
        before = fact_rows(memory)
        memory.rebuild()
        after = fact_rows(memory)
    assert before == after


def assert_no_visible_temp_files(home: Path) -> None:
    for rel, _ in discover_memory_files(home / "workspace"):
        assert not rel.split("/")[-1].startswith("."), rel
        assert not rel.endswith(".tmp"), rel
    for name in leftover_temp_files(home):  # a kill mid-write may leave one: hidden and inert
        assert name.startswith(".")
        assert name.endswith(".tmp")


def test_appends_survive_kills(home: Path, tmp_path: Path) -> None:
    done = crash(home, "append")
    note = today_note(home)
    lines = note.splitlines()
    for child, i in done:
        assert lines.count(append_text(child, i)) == 1, f"append c{child} i{i} lost or doubled"
    entries = [line for line in lines if line.startswith("append ")]
    known = {append_text(int(e.split()[1][1:]), int(e.split()[2][1:])) for e in entries}
    assert set(entries) == known, "a torn append line is in the note"
    assert_no_visible_temp_files(home)
    assert_index_recovers(home, tmp_path)


def test_fact_saves_survive_kills(home: Path, tmp_path: Path) -> None:
    done = crash(home, "save")
    note = today_note(home)
    for child, i in done:
        assert f"Reliability fact c{child} i{i}:" in note, f"saved fact c{child} i{i} lost"
    assert_facts_rebuild_equal(home)
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.sync()
        texts = {row[1] for row in fact_rows(memory)}
    for child, i in done:
        assert any(t.startswith(f"Reliability fact c{child} i{i}:") for t in texts)
    assert_index_recovers(home, tmp_path)


def test_syncs_survive_kills(home: Path, tmp_path: Path) -> None:
    crash(home, "sync")
    assert_no_visible_temp_files(home)
    assert_index_recovers(home, tmp_path)


def test_guarded_rewrites_are_all_or_nothing(home: Path, tmp_path: Path) -> None:
    done = crash(home, "rewrite")
    root = home / "workspace"
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    n = sum(1 for line in text.splitlines() if line.startswith("- entry ")) - 1
    assert text == memory_version(n), "MEMORY.md is not one whole version"
    assert n >= len(done), f"only {n} versions survive but {len(done)} rewrites completed"
    big = (root / "memory" / "big.md").read_text(encoding="utf-8")
    big_n = int(big.split("\n", 1)[0].removeprefix("# big v"))
    assert big == big_version(big_n), "the atomically written file is torn"
    for backup in (root / ".history" / "MEMORY.md").glob("[!.]*.md"):  # every backup is whole
        b = backup.read_text(encoding="utf-8")
        assert b == memory_version(sum(1 for x in b.splitlines() if x.startswith("- ")) - 1)
    assert_no_visible_temp_files(home)
    assert_index_recovers(home, tmp_path)


def test_compactions_flush_before_they_discard(home: Path) -> None:
    done = crash(home, "compact")
    note = today_note(home)
    sessions = home / "sessions" / "global"
    compactions = 0
    for path in sessions.glob("*.jsonl"):
        records = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn last line of a killed writer: skipped on load
        contents = {r["id"]: r.get("content", "") for r in records if r["type"] == "message"}
        for record in records:
            if record["type"] != "compaction":
                continue
            compactions += 1
            for replaced in record["replaced_ids"]:
                content = contents[replaced]
                if content.startswith("I prefer"):
                    fact = content.replace("I prefer", "The user prefers").rstrip(".")
                    assert fact in note, f"compacted message {content!r} never reached memory"
    assert compactions >= len(done)
    assert_facts_rebuild_equal(home)


def test_extractions_survive_kills(home: Path) -> None:
    done = crash(home, "extract")
    note = today_note(home)
    assert note.count("### Conversation notes") >= len(done) // 2
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        for session in memory.sessions():
            memory.session(session.session_id).load()  # every transcript still loads
    assert_facts_rebuild_equal(home)
