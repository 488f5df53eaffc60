"""Times as the stores keep them: integer microseconds since the epoch, UTC.

Owns the one conversion every table uses for its ``*_us`` columns (facts,
fact events, the PostgreSQL files table), so that SQL compares times exactly
and every backend reads back the same aware ``datetime``. Naive datetimes are
taken as UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_us(when: datetime) -> int:
    """An aware datetime as integer microseconds since the epoch (naive means UTC)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delta = when - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(value: int) -> datetime:
    """Integer microseconds since the epoch as an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=value)


def maybe_from_us(value: int | None) -> datetime | None:
    """``from_us`` for a nullable column: None stays None."""
    return None if value is None else from_us(value)


def maybe_to_us(when: datetime | None) -> int | None:
    """``to_us`` for a nullable column: None stays None."""
    return None if when is None else to_us(when)
