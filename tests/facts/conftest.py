"""Fixtures for the facts tests: a FactBook over a temp home with a stepping clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.facts import FactBook


class SteppingClock:
    """A deterministic clock: each call returns a time ``step`` later than the last."""

    def __init__(self, start: datetime | None = None, step: timedelta = timedelta(seconds=1)):
        self.current = start or datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
        self.step = step

    def __call__(self) -> datetime:
        self.current += self.step
        return self.current


@pytest.fixture
def clock() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def book(home: Path, clock: SteppingClock) -> Iterator[FactBook]:
    with FactBook.open(home, HashEmbedder(64), clock=clock) as opened:
        yield opened


def note_path(book: FactBook, relpath: str) -> Path:
    return book.workspace.root / relpath
