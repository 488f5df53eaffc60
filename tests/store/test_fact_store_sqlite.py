"""The SQLite facts store beside other connections to the same file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memdir.errors import IndexMismatchError
from memdir.store.contracts import EmbedderIdentity
from memdir.store.fact_records import Fact, FactFilter
from memdir.store.sqlite.facts import SqliteFactStore

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _fact(fact_id: str) -> Fact:
    return Fact(fact_id, f"fact {fact_id}", "fact", 5, NOW, NOW, None, None, "m.md", 3)


def test_access_counts_wait_for_a_busy_database_instead_of_the_caller(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    with SqliteFactStore.open(path) as saver, SqliteFactStore.open(path) as reader:
        saver.apply(upserts=[_fact("f-aaaaaaaaaa"), _fact("f-bbbbbbbbbb")])
        with saver.transaction():  # a save holds the write lock
            # on the same thread: a call that waited for the lock could never return
            reader.record_access(["f-aaaaaaaaaa"], NOW)
            reader.record_access(["f-aaaaaaaaaa", "f-bbbbbbbbbb"], NOW + timedelta(seconds=1))
            assert saver.get_facts(["f-aaaaaaaaaa"])["f-aaaaaaaaaa"].access_count == 0
        reader.record_access(["f-bbbbbbbbbb"], NOW)  # the database is free: all are written
        got = saver.get_facts(["f-aaaaaaaaaa", "f-bbbbbbbbbb"])
        assert got["f-aaaaaaaaaa"].access_count == 2
        assert got["f-bbbbbbbbbb"].access_count == 2
        assert got["f-aaaaaaaaaa"].last_access == NOW + timedelta(seconds=1)
        with saver.transaction():
            reader.record_access(["f-aaaaaaaaaa"], NOW)
    with SqliteFactStore.open(path) as store:  # closing the reader wrote what waited
        assert store.get_facts(["f-aaaaaaaaaa"])["f-aaaaaaaaaa"].access_count == 3


def test_a_vector_of_other_dimensions_than_the_recorded_embedder_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "facts.db"
    with SqliteFactStore.open(path) as old, SqliteFactStore.open(path) as rebuilder:
        old.bind_identity(EmbedderIdentity("hash", "h", 3))
        assert old.identity == EmbedderIdentity("hash", "h", 3)  # read once, then kept
        rebuilder.clear()
        rebuilder.bind_identity(EmbedderIdentity("hash", "wide", 4))
        vector = np.ones(3, dtype=np.float32)
        with pytest.raises(IndexMismatchError, match="4-dimensional"):
            old.apply(upserts=[_fact("f-cccccccccc")], vectors={"f-cccccccccc": ("s", vector)})
        assert rebuilder.get_facts(["f-cccccccccc"]) == {}  # nothing of it was written


def test_fact_vectors_another_connection_changed_are_searched_as_they_now_are(
    tmp_path: Path,
) -> None:
    path = tmp_path / "facts.db"
    x, y = np.array([1.0, 0.0], dtype=np.float32), np.array([0.0, 1.0], dtype=np.float32)
    a_id, b_id, c_id = "f-aaaaaaaaaa", "f-bbbbbbbbbb", "f-cccccccccc"
    with SqliteFactStore.open(path) as reader, SqliteFactStore.open(path) as writer:
        writer.bind_identity(EmbedderIdentity("hash", "h", 2))
        writer.apply(upserts=[_fact(a_id), _fact(b_id)], vectors={a_id: ("s1", x), b_id: ("s2", y)})
        assert reader.vector_search(x, FactFilter(), 1) == [(a_id, pytest.approx(1.0))]
        writer.apply(upserts=[_fact(a_id)], vectors={a_id: ("s3", y)})  # its text changed
        writer.apply(upserts=[_fact(c_id)], vectors={c_id: ("s4", x)})
        writer.apply(deletes=[b_id])
        got = dict(reader.vector_search(x, FactFilter(), 5))
        assert got == {c_id: pytest.approx(1.0), a_id: pytest.approx(0.0)}
        writer.clear()  # a rebuild with another embedder: same ids, texts and hashes
        writer.bind_identity(EmbedderIdentity("hash", "other", 2))
        writer.apply(upserts=[_fact(a_id)], vectors={a_id: ("s3", x)})
        assert reader.vector_search(x, FactFilter(), 5) == [(a_id, pytest.approx(1.0))]
