"""Salience: bounded boost, decay with a floor, never zero."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memdir.facts.salience import FLOOR, SALIENCE_MAX, SALIENCE_MIN, salience

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@given(
    importance=st.integers(1, 10),
    accesses=st.integers(0, 10**9),
    days_since_access=st.none() | st.floats(0, 1e5),
    days_since_record=st.floats(0, 1e5),
)
def test_salience_stays_within_its_bounds(
    importance: int, accesses: int, days_since_access: float | None, days_since_record: float
) -> None:
    last = None if days_since_access is None else NOW - timedelta(days=days_since_access)
    value = salience(importance, accesses, last, NOW - timedelta(days=days_since_record), NOW)
    assert SALIENCE_MIN - 1e-12 <= value <= SALIENCE_MAX
    assert value > 0.9


def test_bounds_are_as_documented() -> None:
    assert abs(SALIENCE_MIN - 0.97) < 1e-9
    assert abs(SALIENCE_MAX - 1.25) < 1e-9


def test_use_lifts_and_time_decays_to_a_floor_not_zero() -> None:
    fresh = salience(5, 20, NOW, NOW, NOW)
    month = salience(5, 20, NOW - timedelta(days=30), NOW, NOW)
    decade = salience(5, 20, NOW - timedelta(days=3650), NOW, NOW)
    unused = salience(5, 0, None, NOW - timedelta(days=3650), NOW)
    assert fresh > month > decade > unused >= SALIENCE_MIN
    lift_decade = decade - 1.0
    lift_fresh = fresh - 1.0
    assert abs(lift_decade / lift_fresh - FLOOR) < 0.01  # decayed to the floor, not to zero


def test_more_accesses_and_importance_never_lower_salience() -> None:
    values = [salience(5, n, NOW, NOW, NOW) for n in range(0, 50, 5)]
    assert values == sorted(values)
    by_importance = [salience(i, 3, NOW, NOW, NOW) for i in range(1, 11)]
    assert by_importance == sorted(by_importance)
