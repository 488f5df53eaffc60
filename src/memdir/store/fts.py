"""Top-k BM25 keyword search over ``units_fts`` without scoring every matching row.

Search asks for an OR of quoted terms (``"a" OR "b" OR ...``). FTS5 ranks such a
query by computing ``bm25()`` for every row that holds any term, so a few common
words cost tens of milliseconds at 100k units. This module returns the SAME
top-k (up to ties) with far less work, MaxScore style:

* FTS5's ``bm25()`` is a sum over the phrases of the expression of
  ``idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))``, so one term can add at
  most ``idf * (k1 + 1)`` (its *bound*), and an expression naming a subset of the
  terms gives every row a score <= its full score.
* Terms are ordered rarest first; "rare" ones (together in at most ``RARE_ROWS``
  rows) are grouped. "Regions" are small queries, each naming every term at most
  once: the rare terms alone; the rare terms AND any common one; and for common
  term ``c_i`` the rows holding it and a later (more common) one
  (``c_i AND (c_i+1 OR ...)``). Every row's exact full score is found by the region
  of its rarest term, and each region's ``LIMIT k`` keeps every row of the true
  top-k (rows ranked above it there truly beat it), so merging the regions by the
  best score per row is exact. A region is skipped when the bounds of its terms
  sum below the k-th score found so far.
* Rows in no region hold a single common term and nothing else. When the k-th
  merged score beats that term's bound, or its ceiling (its highest score in any
  row, one cached query per database version), they cannot enter and the answer is
  exact. Otherwise ``top_units`` returns None and the store runs the full query.

Expressions of any other shape (plain words, AND, NEAR, column filters) and small
matches go straight to the full query.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

K1 = 1.2  # FTS5 bm25() constants
PLAIN_ROWS = 4_000  # matches this small: the full query is cheap enough
RARE_ROWS = 2_000  # rare terms: their rows together stay this small
MAX_TERM_STATS = 4_096  # cached document frequencies before the cache starts afresh

_PHRASE = r'"(?:[^"]|"")*"'
_OR_OF_PHRASES = re.compile(rf"\s*{_PHRASE}(?:\s+OR\s+{_PHRASE})*\s*")
_PHRASES = re.compile(_PHRASE)

Query = Callable[[str, int], list[tuple[int, float]]]
"""Run one MATCH expression with the caller's filters: (unit id, -bm25) best first."""


@dataclass
class TermStats:
    """Row count and per-phrase document frequencies, valid for one database version."""

    stamp: tuple[int, int] = (-1, -1)
    rows: int = 0
    frequencies: dict[str, int] = field(default_factory=dict)
    ceilings: dict[str, float] = field(default_factory=dict)


def split_phrases(expression: str) -> list[str] | None:
    """The distinct quoted phrases of an ``"a" OR "b"`` expression; None for other shapes."""
    if _OR_OF_PHRASES.fullmatch(expression) is None:
        return None
    return list(dict.fromkeys(_PHRASES.findall(expression)))


def refresh_stats(conn: sqlite3.Connection, stats: TermStats) -> None:
    """Forget cached frequencies when the database changed (here or in another process)."""
    version = int(conn.execute("PRAGMA data_version").fetchone()[0])
    stamp = (version, conn.total_changes)
    if stamp != stats.stamp or len(stats.frequencies) > MAX_TERM_STATS:
        stats.stamp = stamp
        stats.rows = int(conn.execute("SELECT count(*) FROM units").fetchone()[0])
        stats.frequencies.clear()
        stats.ceilings.clear()


def phrase_frequencies(
    conn: sqlite3.Connection, stats: TermStats, phrases: Sequence[str]
) -> dict[str, int]:
    """How many rows hold each phrase (what FTS5 uses for its idf), cached in ``stats``."""
    for phrase in phrases:
        if phrase not in stats.frequencies:
            row = conn.execute(
                "SELECT count(*) FROM units_fts WHERE units_fts MATCH ?", (phrase,)
            ).fetchone()
            stats.frequencies[phrase] = int(row[0])
    return {p: stats.frequencies[p] for p in phrases}


def term_bound(frequency: int, rows: int) -> float:
    """The most one term can add to ``-bm25()``: FTS5's idf times ``k1 + 1``."""
    idf = math.log((rows - frequency + 0.5) / (frequency + 0.5))
    return (idf if idf > 0.0 else 1e-6) * (K1 + 1.0)


def _any(phrases: Sequence[str]) -> str:
    return "(" + " OR ".join(phrases) + ")"


def term_ceiling(conn: sqlite3.Connection, stats: TermStats, phrase: str) -> float:
    """The highest score ``phrase`` alone gets in any row (cached like the frequencies).

    Costs one ``bm25()`` per row holding the phrase, once per database version; it
    replaces the loose :func:`term_bound` when that cannot prove a top-k exact.
    """
    if phrase not in stats.ceilings:
        row = conn.execute(
            "SELECT -bm25(units_fts) FROM units_fts WHERE units_fts MATCH ? "
            "ORDER BY bm25(units_fts) LIMIT 1",
            (phrase,),
        ).fetchone()
        stats.ceilings[phrase] = float(row[0]) if row else 0.0
    return stats.ceilings[phrase]


def top_units(
    query: Query,
    phrases: Sequence[str],
    frequencies: dict[str, int],
    rows: int,
    limit: int,
    ceiling: Callable[[str], float],
) -> list[tuple[int, float]] | None:
    """The exact top ``limit`` of the OR of ``phrases``; None when the regions cannot prove it.

    ``frequencies`` are the phrases' document counts, ``rows`` the rows of the index and
    ``ceiling`` gives a phrase's highest single-term score (see :func:`term_ceiling`).
    """
    ordered = sorted(phrases, key=lambda p: frequencies[p])
    rare: list[str] = []
    for phrase in ordered:
        if sum(frequencies[p] for p in rare) + frequencies[phrase] > RARE_ROWS:
            break
        rare.append(phrase)
    common = ordered[len(rare) :]
    bounds = [term_bound(frequencies[p], rows) for p in common]
    best: dict[int, float] = {}

    def run(expression: str) -> None:
        for uid, score in query(expression, limit):
            if score > best.get(uid, -1.0):
                best[uid] = score

    def kth() -> float:
        return sorted(best.values(), reverse=True)[limit - 1] if len(best) >= limit else -1.0

    if rare:
        run(_any(rare))
        if common:
            run(f"{_any(rare)} AND {_any(common)}")
    for i in range(len(common) - 1):
        # Rows whose rarest term is common[i] score at most the sum of the later bounds.
        if sum(bounds[i:]) < kth():
            break
        run(f"{common[i]} AND {_any(common[i + 1 :])}")
    # Rows holding a single common term (and no other term) were in no region.
    threshold = kth()
    for phrase, bound in zip(common, bounds, strict=True):
        if bound >= threshold and ceiling(phrase) >= threshold:
            return None
    return sorted(best.items(), key=lambda item: -item[1])[:limit]
