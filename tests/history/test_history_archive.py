"""A home exported as one archive imports on another machine with the same answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError, NotFoundError
from memdir.memory import Memory

QUERIES = ("what does the user drink", "deploy day", "the cat", "parking")


def answers(memory: Memory) -> list[object]:
    found: list[object] = []
    for query in QUERIES:
        hits = memory.search(query, include_history=True).hits
        found.append([(h.path, h.start_line, h.end_line, h.text, round(h.score, 6)) for h in hits])
        found.append([(r.fact.id, r.fact.text) for r in memory.recall(query)])
    facts = memory.list_facts(include_superseded=True, include_forgotten=True)
    found.append(sorted((f.id, f.text, f.valid_to, f.forgotten_at) for f in facts))
    return found


def test_an_archive_round_trips_files_facts_history_and_answers(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    archive = tmp_path / "home.memdir"
    with Memory.open(first, "coder", embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        memory.save("The user drinks green tea.")
        memory.save("The user drinks black coffee now.")  # supersedes or adds
        memory.save("Deploys run on Fridays.", valid_until=datetime.now(UTC) + timedelta(days=9))
        fact = memory.save("The cat is called Luna.").fact
        assert fact is not None
        memory.forget(fact_id=fact.id, reason="a different cat")
        memory.write_file("MEMORY.md", "# Memory\n\n- Parking is on level two.\n")
        (first / "agents" / "coder" / "memory" / "typed.md").write_text("- typed by hand\n")
        memory.export_archive(archive)
        # the answers of the home's files indexed from scratch, as an import indexes them
        # (an index grown save by save ranks a few low hits differently: docs/history.md)
        memory.rebuild()
        before = answers(memory)
        versions = [v.id for v in memory.history_versions(limit=100)]
    with Memory.open(second, "coder", embedder=HashEmbedder(), chat_model=None) as memory:
        memory.import_archive(archive)
        assert answers(memory) == before
        assert [v.id for v in memory.history_versions(limit=100)] == versions
        assert memory.read_file("memory/typed.md") == "- typed by hand\n"  # outside edit too


def test_import_refuses_a_home_in_use_or_a_file_that_is_no_archive(tmp_path: Path) -> None:
    bogus = tmp_path / "not-an-archive"
    bogus.write_text("hello")
    with Memory.open(tmp_path / "fresh", embedder=HashEmbedder(), chat_model=None) as memory:
        with pytest.raises(InvalidInputError, match="not a memdir archive"):
            memory.import_archive(bogus)
        with pytest.raises(NotFoundError, match="no archive"):
            memory.import_archive(tmp_path / "missing")
    with Memory.open(tmp_path / "used", embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        memory.write_file("MEMORY.md", "- mine\n")
        memory.export_archive(tmp_path / "used.memdir")
        with pytest.raises(InvalidInputError, match="new --home"):
            memory.import_archive(tmp_path / "used.memdir")
        assert memory.read_file("MEMORY.md") == "- mine\n"
