from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.search.mmr import select_diverse
from memdir.search.recency import note_date, recency_multiplier

NOW = datetime(2024, 3, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("memory/2024-01-02.md", date(2024, 1, 2)),
        ("memory/2024-01-02-standup-notes.md", date(2024, 1, 2)),
        ("memory/2024/2024-01-02.md", date(2024, 1, 2)),
        ("memory/2024-13-40.md", None),
        ("notes/2024-01-02.md", None),
        ("MEMORY.md", None),
    ],
)
def test_note_date(path: str, expected: date | None) -> None:
    assert note_date(path) == expected


def test_today_gets_full_boost_and_half_life_halves_it() -> None:
    assert recency_multiplier("memory/2024-03-10.md", NOW, 30.0, 0.1) == pytest.approx(1.1)
    assert recency_multiplier("memory/2024-02-09.md", NOW, 30.0, 0.1) == pytest.approx(1.05)


def test_undated_and_evergreen() -> None:
    assert recency_multiplier("USER.md", NOW, 30.0, 0.1) == 1.0
    assert recency_multiplier("MEMORY.md", NOW, 30.0, 0.1) == pytest.approx(1.1)
    assert recency_multiplier("memory/2024-03-10.md", NOW, 30.0, 0.0) == 1.0


@given(
    st.dates(min_value=date(1990, 1, 1), max_value=date(2100, 1, 1)),
    st.floats(min_value=0.1, max_value=3650),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_boost_is_bounded(day: date, half_life: float, max_boost: float) -> None:
    value = recency_multiplier(f"memory/{day.isoformat()}.md", NOW, half_life, max_boost)
    assert 1.0 <= value <= 1.0 + max_boost + 1e-12


def test_mmr_demotes_near_duplicates() -> None:
    a = np.array([1.0, 0.0], dtype=np.float32)
    b = np.array([0.999, 0.045], dtype=np.float32)
    c = np.array([0.0, 1.0], dtype=np.float32)
    ranked = [(1, 1.0), (2, 0.95), (3, 0.8)]
    vectors = {1: a, 2: b / np.linalg.norm(b), 3: c}
    assert [i for i, _ in select_diverse(ranked, vectors, 0.5, 3)] == [1, 3, 2]
    assert [i for i, _ in select_diverse(ranked, vectors, 1.0, 3)] == [1, 2, 3]


def test_mmr_keeps_limit_and_handles_missing_vectors() -> None:
    out = select_diverse([(1, 0.9), (2, 0.8), (3, 0.1)], {}, 0.5, 2)
    assert [i for i, _ in out] == [1, 2]
    assert select_diverse([], {}, 0.5, 3) == []
