"""Salience: how much a fact's use and importance lift it, bounded, never to zero.

For a fact with importance ``i`` (1-10), ``n`` recorded accesses and ``d``
days since its last access (or since it was recorded, if never accessed)::

    usage    = 1 - exp(-n / USAGE_SCALE)                          in [0, 1)
    recency  = FLOOR + (1 - FLOOR) * 0.5 ** (d / HALF_LIFE_DAYS)  in (FLOOR, 1]
    salience = 1 + IMPORTANCE_WEIGHT * (i - 5) / 5
                 + USAGE_WEIGHT * (FRESH_SHARE + (1 - FRESH_SHARE) * usage) * recency

With the constants below salience lies in ``[SALIENCE_MIN, SALIENCE_MAX)`` =
``[0.96 + 0.2*0.2*0.25, 1.25)`` ≈ ``[0.97, 1.25)``. Recency decays with a
half-life of two weeks towards ``FLOOR`` (a quarter), never to zero, and no
fact's salience ever drops below ``SALIENCE_MIN``. ``FRESH_SHARE`` gives a new,
never-recalled fact a fifth of the usage boost, so fresh facts edge out stale
ones of equal relevance. Recall multiplies its fused relevance by salience;
the bounds keep a well-used fact from outranking a clearly better match.
"""

from __future__ import annotations

import math
from datetime import datetime

from memdir.store.fact_records import Fact

USAGE_SCALE = 4.0
HALF_LIFE_DAYS = 14.0
FLOOR = 0.25
FRESH_SHARE = 0.2
IMPORTANCE_WEIGHT = 0.05
USAGE_WEIGHT = 0.2

SALIENCE_MIN = 1 - IMPORTANCE_WEIGHT * 0.8 + USAGE_WEIGHT * FRESH_SHARE * FLOOR
SALIENCE_MAX = 1 + IMPORTANCE_WEIGHT + USAGE_WEIGHT


def salience(
    importance: int,
    access_count: int,
    last_access: datetime | None,
    recorded_at: datetime,
    now: datetime,
) -> float:
    """The salience factor (see the module docstring for the formula and its bounds)."""
    usage = 1.0 - math.exp(-max(0, access_count) / USAGE_SCALE)
    reference = last_access if last_access is not None else recorded_at
    days = max(0.0, (now - reference).total_seconds() / 86_400)
    recency = FLOOR + (1.0 - FLOOR) * math.pow(0.5, days / HALF_LIFE_DAYS)
    lift = USAGE_WEIGHT * (FRESH_SHARE + (1.0 - FRESH_SHARE) * usage) * recency
    return 1.0 + IMPORTANCE_WEIGHT * (min(10, max(1, importance)) - 5) / 5 + lift


def fact_salience(fact: Fact, now: datetime) -> float:
    return salience(fact.importance, fact.access_count, fact.last_access, fact.recorded_at, now)
