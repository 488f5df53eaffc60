"""The numbered facts migrations on a database an older memdir wrote."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from keyword_support import words
from memdir.errors import StoreError
from memdir.store.fact_records import Fact, FactFilter
from memdir.store.fact_rows import fact_row
from memdir.store.sqlite.facts import SqliteFactStore, vector_blob
from memdir.store.sqlite.migrations import FACT_MIGRATIONS, f001_facts

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _v1_database(path: Path) -> None:
    """The facts tables as f001 left them, with one fact, its vector and an access."""
    conn = sqlite3.connect(path)
    f001_facts(conn)
    conn.execute(
        "CREATE TABLE fact_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
        "applied_at TEXT NOT NULL)"
    )
    conn.execute("INSERT INTO fact_migrations (name, applied_at) VALUES ('f001_facts', 'x')")
    fact = Fact("f-aaaaaaaaaa", "The sky is blue", "fact", 5, NOW, NOW, None, None, "m.md", 3)
    conn.execute(
        "INSERT INTO facts (id, scope, text, category, importance, recorded_us, valid_from_us, "
        "valid_to_us, supersedes, source_path, source_line, access_count, last_access_us, "
        "forgotten_us, forgotten_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 4, ?, ?, ?)",
        [v for i, v in enumerate(fact_row("global", fact)) if i != 11],
    )
    blob = vector_blob(np.array([1.0, 0.0], dtype=np.float32))
    conn.execute("INSERT INTO fact_vectors SELECT num, 'sha', ? FROM facts", (blob,))
    conn.commit()
    conn.close()


def test_f002_keeps_the_facts_and_scopes_their_ids(tmp_path: Path) -> None:
    path = tmp_path / "memdir.db"
    _v1_database(path)
    with (
        SqliteFactStore.open(path) as shared,
        SqliteFactStore.open(path, source="agent:a") as agent,
    ):
        kept = shared.get_facts(["f-aaaaaaaaaa"])["f-aaaaaaaaaa"]
        assert (kept.text, kept.access_count) == ("The sky is blue", 4)
        assert shared.vector_shas() == {"f-aaaaaaaaaa": "sha"}
        assert shared.keyword_search(words("sky"), FactFilter(), 5)[0][0] == "f-aaaaaaaaaa"
        agent.apply(upserts=[replace(kept, text="The sky is green")])
        assert shared.get_facts(["f-aaaaaaaaaa"])["f-aaaaaaaaaa"].text == "The sky is blue"
        assert shared.keyword_search(words("green"), FactFilter(), 5) == []
    done = sqlite3.connect(path).execute("SELECT name FROM fact_migrations ORDER BY id").fetchall()
    assert [row[0] for row in done] == [migration.name for migration in FACT_MIGRATIONS]


def test_a_migration_from_a_newer_memdir_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memdir.db"
    SqliteFactStore.open(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO fact_migrations (name, applied_at) VALUES ('f999_x', 'x')")
    with pytest.raises(StoreError, match="memdir index rebuild"):
        SqliteFactStore.open(path)
