"""A bounded boost for recent notes, read from dated file names.

``memory/YYYY-MM-DD.md`` and ``memory/YYYY-MM-DD-<slug>.md`` (at any depth of
``memory/``) carry their date. The multiplier is
``1 + max_boost * 0.5 ** (age_days / half_life_days)``: at most ``1 + max_boost``
(today or future), approaching 1 for old notes, never below 1, so recency can
re-order close hits but never bury an old answer. Files without a date get 1;
``MEMORY.md`` is evergreen: curated long-term memory gets the full boost.
"""

from __future__ import annotations

import re
from datetime import date, datetime

_DATED = re.compile(r"(?:^|/)memory/(?:.*/)?(\d{4})-(\d{2})-(\d{2})(?:[-_][^/]*)?\.md$")
EVERGREEN = frozenset({"MEMORY.md"})


def note_date(path: str) -> date | None:
    """The date in a daily/session note's file name, or ``None``."""
    match = _DATED.search(path)
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def recency_multiplier(path: str, now: datetime, half_life_days: float, max_boost: float) -> float:
    """The bounded boost factor in ``[1, 1 + max_boost]`` for a file."""
    if max_boost <= 0.0:
        return 1.0
    if path in EVERGREEN:
        return 1.0 + max_boost
    day = note_date(path)
    if day is None:
        return 1.0
    age_days = max(0.0, float((now.date() - day).days))
    decay: float = 0.5 ** (age_days / half_life_days)
    return 1.0 + max_boost * decay
