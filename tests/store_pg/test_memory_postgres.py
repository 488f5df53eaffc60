"""The facade on PostgreSQL: same API, same results as on SQLite."""

from __future__ import annotations

from pathlib import Path

from pgserver_support import TestServer

from memdir import Memory
from memdir.embeddings.base import HashEmbedder


def open_memory(home: Path, dsn: str, schema: str) -> Memory:
    overrides = {"store": {"backend": "postgres", "dsn": dsn, "schema_name": schema}}
    return Memory.open(home, overrides=overrides, embedder=HashEmbedder(), chat_model=None)


def test_sync_search_and_rebuild_on_postgres(
    home: Path, pg_server: TestServer, pg_schema: str
) -> None:
    with open_memory(home, pg_server.dsn, pg_schema) as memory:
        memory.init()
        memory.append_daily("We chose PostgreSQL for the billing service.")
        memory.append_daily("The cat is called Whiskerino.")
        assert memory.index_status().files == 1  # each append indexed its note at once
        report = memory.sync()
        # the note was indexed when it was written; the seeded USER.md and TOOLS.md now
        assert (report.added, report.unchanged) == (2, 1)
        hits = memory.search("which database for billing")
        assert hits.hits[0].text.endswith("We chose PostgreSQL for the billing service.")
        assert memory.index_status().files == 3
        rebuilt = memory.rebuild()
        assert rebuilt.added == 3
        again = memory.search("which database for billing")
        assert [h.citation for h in again] == [h.citation for h in hits]


def test_facts_live_in_postgres_with_the_postgres_backend(
    home: Path, pg_server: TestServer, pg_schema: str
) -> None:
    with open_memory(home, pg_server.dsn, pg_schema) as memory:
        memory.save("My cat's name is Whiskerino")
        memory.save("My cat is now called Luna")
        assert memory.recall("what is my cat called?")[0].fact.text == "My cat is now called Luna"
    assert not (home / "index" / "memdir.db").exists()
    with open_memory(home, pg_server.dsn, pg_schema) as memory:
        memory.rebuild()
        history = memory.list_facts(include_superseded=True)
        assert [f.text for f in history] == [
            "My cat's name is Whiskerino",
            "My cat is now called Luna",
        ]
