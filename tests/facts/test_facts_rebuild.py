"""Property: after any sequence of saves, supersessions, reinforcements and forgets,
deleting the database and rebuilding from the notes restores every fact exactly."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.embeddings.base import HashEmbedder
from memdir.facts import Fact, FactBook, FactCandidate, FactDecision
from memdir.store.sqlite.connect import delete_database

WORDS = ["cat", "tea", "Berlin", "Luna", "project", "blue", "Friday", "coffee", "piano"]
_ops = st.lists(
    st.tuples(
        st.sampled_from(["save", "supersede", "repeat", "forget"]),
        st.integers(0, 50),  # which earlier fact
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
        st.none() | st.integers(1, 10),
        st.none() | st.sampled_from(["fact", "preference", "decision", "custom-1"]),
    ),
    min_size=1,
    max_size=12,
)


class Clock:
    """Seven hours per call: the events spread over several daily notes."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(hours=7, microseconds=1)
        return self.now


class Planner:
    """A ``decide`` callable that does what the test planned (the LLM plug-in point)."""

    def __init__(self) -> None:
        self.next = FactDecision(action="add")

    def __call__(self, text: str, candidates: Sequence[FactCandidate]) -> FactDecision:
        wanted = self.next
        if wanted.target_id and wanted.target_id not in {c.fact.id for c in candidates}:
            return FactDecision(action="add")  # the target is not valid now
        return wanted


def _comparable(facts: list[Fact]) -> list[Fact]:
    return sorted((replace(f, access_count=0, last_access=None) for f in facts), key=lambda f: f.id)


def _apply(
    book: FactBook, planner: Planner, ops: list[tuple[str, int, str, int | None, str | None]]
) -> None:
    for kind, pick, text, importance, category in ops:
        known = book.list_facts(include_superseded=True, include_forgotten=True)
        target = known[pick % len(known)] if known else None
        if kind == "forget" and target is not None:
            book.forget(target.id, reason=f"op {pick}")
            continue
        planner.next = FactDecision(action="add")
        if kind == "supersede" and target is not None:
            planner.next = FactDecision(action="supersede", target_id=target.id)
        if kind == "repeat" and target is not None:
            planner.next = FactDecision(action="none", target_id=target.id)
        book.save(f"{text} {pick}", category=category, importance=importance)


@pytest.mark.slow
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=_ops)
def test_rebuild_from_notes_restores_every_fact(
    ops: list[tuple[str, int, str, int | None, str | None]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        planner = Planner()
        with FactBook.open(home, HashEmbedder(16), decide=planner, clock=Clock()) as book:
            _apply(book, planner, ops)
            before = book.list_facts(include_superseded=True, include_forgotten=True)
            db = book.store.path
        delete_database(db)
        with FactBook.open(home, HashEmbedder(16)) as fresh:
            assert fresh.list_facts(include_superseded=True, include_forgotten=True) == []
            report = fresh.rebuild()
            after = fresh.list_facts(include_superseded=True, include_forgotten=True)
            assert report.added == len(before)
            assert fresh.store.count_unembedded() == 0
            assert fresh.sync().files_read == 0
        assert _comparable(after) == _comparable(before)
        notes = sorted((home / "workspace" / "memory").glob("*.md")) if before else []
        assert len(notes) >= (1 if before else 0)
