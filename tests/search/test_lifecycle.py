"""Retired facts are history: a default search leaves them out, `include_history` marks them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir import Memory
from memdir.facts.markers import format_fact_line
from memdir.interfaces.cli import app
from memdir.search.lifecycle import apply_lifecycle, describe_retired, index_retired
from memdir.search.snippets import Candidate
from memdir.store.contracts import Unit
from memdir.store.fact_records import RetiredLine
from memdir.tools import call_tool, call_tool_result

T1 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
T2 = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
OLD = "f-aaaaaaaaaa"
NEW = "f-bbbbbbbbbb"


def release_notes() -> str:
    return (
        "# 2026-11-21\n\n"
        "Release planning notes\n"
        + format_fact_line(OLD, "The release train ships every second Tuesday", "decision", 5, T1)
        + "\n"
        + format_fact_line(
            NEW, "The release train now ships every Thursday", "decision", 5, T2, supersedes=OLD
        )
        + "\n- The release checklist lives in the wiki.\n"
    )


@pytest.fixture
def memory(home: Path) -> Memory:
    opened = Memory.open(home, embedder=None)
    opened.write_file("memory/2026-11-21.md", release_notes())
    opened.sync()
    return opened


def test_a_superseded_fact_never_comes_back_from_a_default_search(memory: Memory) -> None:
    with memory:
        results = memory.search("when does the release train ship on tuesday", min_score=0.0)
        history = memory.search(
            "when does the release train ship on tuesday", min_score=0.0, include_history=True
        )
    texts = [hit.text for hit in results.hits]
    assert any("every Thursday" in text for text in texts)
    assert not any("Tuesday" in text for text in texts)
    assert all(hit.retired is None for hit in results.hits)
    assert all("<!--" not in text for text in texts)
    retired = [hit for hit in history.hits if hit.retired is not None]
    assert [hit.text for hit in retired] == ["- The release train ships every second Tuesday"]
    assert retired[0].retired is not None
    assert retired[0].retired.kind == "superseded"
    assert describe_retired(retired[0].retired) == "superseded (valid 2026-11-01 to 2026-11-21)"
    assert history.hits.index(retired[0]) == len(history.hits) - 1  # current hits first


def test_a_forgotten_fact_and_its_record_are_left_out(home: Path) -> None:
    with Memory.open(home, embedder=None) as memory:
        memory.save("The staging database is staging-db-2", category="fact")
        memory.save("We chose PostgreSQL as the billing database", category="decision")
        memory.forget(query="staging database staging-db-2", reason="staging was retired")
        memory.sync()
        query = "which database for billing? staging database"
        found = memory.search(query, min_score=0.0)
        history = memory.search(query, min_score=0.0, include_history=True)
        text = call_tool(memory, "memory_search", {"query": query, "include_history": True})
        data = call_tool_result(memory, "memory_search", {"query": query, "minScore": 0}).data
    assert found.hits[0].text.startswith("- We chose PostgreSQL")
    assert not any("staging-db-2" in hit.text or "Forgot" in hit.text for hit in found.hits)
    kinds = {hit.retired.kind for hit in history.hits if hit.retired is not None}
    assert kinds == {"forgotten", "forget-record"}
    assert "RETIRED: forgotten on " in text
    assert ": staging was retired (valid since " in text
    assert data is not None
    assert all(hit["retired"] is None for hit in data["hits"])
    assert not any("staging-db-2" in hit["text"] for hit in data["hits"])


def test_confidence_counts_only_current_lines(home: Path) -> None:
    with Memory.open(home, embedder=None) as memory:
        memory.save("The office wifi password hint is the cat's name", category="fact")
        memory.forget(query="office wifi password hint", reason="the office moved")
        memory.sync()
        results = memory.search("office wifi password hint")
        history = memory.search("office wifi password hint", min_score=0.0, include_history=True)
    assert results.hits == ()
    assert history.hits  # the lines are there, only retired
    assert all(hit.retired is not None for hit in history.hits)


def test_cli_history_flag(memory: Memory, home: Path) -> None:
    memory.close()
    runner = CliRunner()
    args = ["--home", str(home), "--set", "embeddings.provider=none", "search"]
    plain = runner.invoke(app, [*args, "release train tuesday", "--min-score", "0"])
    marked = runner.invoke(app, [*args, "release train tuesday", "--min-score", "0", "--history"])
    assert plain.exit_code == 0, plain.output
    assert "second Tuesday" not in plain.stdout
    assert "RETIRED: superseded (valid 2026-11-01 to 2026-11-21)" in marked.stdout


def unit(start: int, lines: list[str]) -> Unit:
    return Unit("global", "memory/a.md", "chunk", start, start + len(lines) - 1, "\n".join(lines))


def retired_line(number: int) -> RetiredLine:
    return RetiredLine("global", "memory/a.md", number, OLD, "superseded", T1, T2)


def test_a_chunk_is_cut_around_retired_lines() -> None:
    chunk = Candidate(unit(3, ["- one", "- two", "- old fact", "", "- four"]), 0.8)
    retired = index_retired([retired_line(5)])
    kept = apply_lifecycle([chunk], retired, include_history=False)
    assert [(c.start_line, c.end_line, c.text) for c in kept] == [
        (3, 4, "- one\n- two"),
        (7, 7, "- four"),
    ]
    marked = apply_lifecycle([chunk], retired, include_history=True)
    assert [(c.start_line, c.end_line, c.retired is not None) for c in marked] == [
        (3, 4, False),
        (5, 5, True),
        (7, 7, False),
    ]
    untouched = Candidate(unit(10, ["- other"]), 0.5)
    assert apply_lifecycle([untouched], retired, include_history=False) == [untouched]
