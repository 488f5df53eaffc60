"""Top-k BM25 keyword search over ``units_fts``: every unit kind in one pass, pruned.

:func:`ranked_units` is the SQLite store's keyword search. One MATCH statement serves
every requested unit kind: its rows stream best first (``bm25()``, then unit id) and
the statement stops once each kind has its ``k`` rows, so a search over blocks and
chunks evaluates the expression, computes FTS5's idf and joins ``units`` once, not
once per kind. Each kind's list is exactly what a query for that kind alone returns.

Search asks for an OR of quoted terms (``"a" OR "b" OR ...``). FTS5 ranks such a
query by computing ``bm25()`` for every row that holds any term, so a few common
words cost tens of milliseconds at 100k units. :func:`top_units` returns the SAME
top-k per kind with far less work, MaxScore style:

* FTS5's ``bm25()`` is a sum over the phrases of the expression of
  ``idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))``, so one term can add at
  most ``idf * (k1 + 1)`` (its *bound*), and an expression naming a subset of the
  terms gives every row a score <= its full score.
* Terms are ordered rarest first; "rare" ones (together in at most ``RARE_ROWS``
  rows) are grouped. "Regions" are small queries, each naming every term at most
  once: the rare terms alone; the rare terms AND any common one; and for common
  term ``c_i`` the rows holding it and a later (more common) one
  (``c_i AND (c_i+1 OR ...)``). Every row's exact full score is found by the region
  of its rarest term, and each region's top ``k`` of a kind keeps every row of that
  kind's true top-k (rows ranked above it there truly beat it), so merging the
  regions by the best score per row is exact. A kind leaves the regions once the
  bounds of a region's terms sum below its k-th score so far; when the bounds are
  too loose for that, each term's ceiling (below) replaces its bound. A region no
  kind needs is skipped: with common terms, usually all but the first.
* Rows in no region hold a single common term and nothing else. For a kind whose
  k-th merged score that term's bound and its ceiling (its highest score in any row,
  one cached query per database version) both reach, a last region ranks them:
  ``c_i NOT (every other term)``, whose ``bm25()`` is the row's full score (the
  other terms add 0 there). Every row is then in a region or provably out, so
  every kind's answer is exact; such a region ranks one term's lone rows, where
  the full query would rank the rows of every term.

Expressions of any other shape (plain words, AND, NEAR, column filters) and small
matches go straight to the full query. Ties in score go to the lower unit id
everywhere, so the pruned and the full query agree on ids too. One caveat: ``bm25()``
adds a row's phrases in the order its expression names them, and a region may name them
in another order than the query, so a score can differ from the full query's in the last
bit, and two rows whose full scores tie within that bit can swap (seen on skewed test
data). The in-memory ranking (``memdir.store.keywords``, the default) has no such caveat.

Kind and source stay a join on ``units``: with an external-content FTS table an
UNINDEXED column is read from that same row, and an indexed one would change
``bm25()``'s document lengths (and so the ranking).
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import get_args

from memdir.store.base import UnitKind

K1 = 1.2  # FTS5 bm25() constants
B = 0.75
IDF_FLOOR = 1e-6  # what FTS5 uses for an idf <= 0 (a term in half the rows or more)
PLAIN_ROWS = 4_000  # matches this small: the full query is cheap enough
RARE_ROWS = 2_000  # rare terms: their rows together stay this small
MAX_TERM_STATS = 4_096  # cached document frequencies before the cache starts afresh
SLACK = 1e-9  # bounds summed in another order than FTS5 sums scores: allow for rounding

_PHRASE = r'"(?:[^"]|"")*"'
_OR_OF_PHRASES = re.compile(rf"\s*{_PHRASE}(?:\s+OR\s+{_PHRASE})*\s*")
_PHRASES = re.compile(_PHRASE)

ALL_KINDS: tuple[UnitKind, ...] = get_args(UnitKind)

Ranked = list[tuple[int, float]]
"""(unit id, -bm25) best first; ties by unit id."""

Query = Callable[[str, Sequence[UnitKind], int], dict[UnitKind, Ranked]]
"""Run one MATCH expression with the caller's sources: the top ``count`` of each kind."""


@dataclass
class TermStats:
    """Row count and per-phrase document frequencies, valid for one database version."""

    stamp: tuple[int, int] = (-1, -1)
    rows: int = 0
    frequencies: dict[str, int] = field(default_factory=dict)
    ceilings: dict[str, float] = field(default_factory=dict)


def split_phrases(expression: str) -> list[str] | None:
    """The distinct quoted phrases of an ``"a" OR "b"`` expression; None for other shapes."""
    phrases = every_phrase(expression)
    return None if phrases is None else list(dict.fromkeys(phrases))


def every_phrase(expression: str) -> list[str] | None:
    """Every quoted phrase of an ``"a" OR "b"`` expression, in order, repeats included
    (FTS5 scores a repeated phrase twice); None for other shapes."""
    if _OR_OF_PHRASES.fullmatch(expression) is None:
        return None
    return _PHRASES.findall(expression)


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


def fts5_idf(frequency: int, rows: int) -> float:
    """FTS5's idf of a phrase held by ``frequency`` of ``rows`` rows (floored above 0)."""
    idf = math.log((rows - frequency + 0.5) / (frequency + 0.5))
    return idf if idf > 0.0 else IDF_FLOOR


def smoothed_idf(frequency: int, rows: int) -> float:
    """BM25's idf with Lucene's ``1 +``: ``log(1 + (rows - n + 0.5) / (n + 0.5))``, above 0
    for every term. FTS5's idf floors a term held by half the rows or more to almost 0,
    which in a memory of a few notes makes its words count for nothing; what share of a
    query a unit holds (``KeywordIndex.coverage``) needs every word to weigh something."""
    return math.log(1.0 + (rows - frequency + 0.5) / (frequency + 0.5))


def term_bound(frequency: int, rows: int) -> float:
    """The most one term can add to ``-bm25()``: FTS5's idf times ``k1 + 1``."""
    return fts5_idf(frequency, rows) * (K1 + 1.0)


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
    kinds: Sequence[UnitKind],
    phrases: Sequence[str],
    frequencies: dict[str, int],
    rows: int,
    limit: int,
    ceiling: Callable[[str], float],
) -> dict[UnitKind, Ranked]:
    """The exact top ``limit`` of each kind for the OR of ``phrases``.

    ``frequencies`` are the phrases' document counts, ``rows`` the rows of the index and
    ``ceiling`` gives a phrase's highest single-term score (see :func:`term_ceiling`).
    Phrases no row holds add nothing to any score and are left out of the regions.
    """
    ordered = sorted((p for p in phrases if frequencies[p] > 0), key=lambda p: frequencies[p])
    rare: list[str] = []
    for phrase in ordered:
        if sum(frequencies[p] for p in rare) + frequencies[phrase] > RARE_ROWS:
            break
        rare.append(phrase)
    common = ordered[len(rare) :]
    bounds = [term_bound(frequencies[p], rows) for p in common]
    best: dict[UnitKind, dict[int, float]] = {kind: {} for kind in kinds}

    def run(expression: str, wanted: Sequence[UnitKind]) -> None:
        for kind, ranked in query(expression, wanted, limit).items():
            scores = best[kind]
            for uid, score in ranked:
                if score > scores.get(uid, -1.0):
                    scores[uid] = score

    def kth(kind: UnitKind) -> float:
        scores = best[kind]
        return sorted(scores.values(), reverse=True)[limit - 1] if len(scores) >= limit else -1.0

    if rare:
        run(_any(rare), kinds)
        if common:
            run(f"{_any(rare)} AND {_any(common)}", kinds)
    for i in range(len(common) - 1):
        # Rows whose rarest term is common[i] score at most the sum of the later terms'
        # bounds: a kind whose k-th score beats that needs no more regions.
        wanted = [kind for kind in kinds if sum(bounds[i:]) >= kth(kind)]
        if wanted:  # the loose bounds did not settle it: try the terms' ceilings
            reach = region_reach(common[i:], bounds[i:], ceiling)
            wanted = [kind for kind in wanted if reach >= kth(kind)]
        if not wanted:
            break
        run(f"{common[i]} AND {_any(common[i + 1 :])}", wanted)
    # Rows holding one common term and no other term are in no region yet: rank them
    # too for a kind whose k-th score that term's bound and ceiling both reach.
    present = rare + common
    for phrase, bound in zip(common, bounds, strict=True):
        wanted = [kind for kind in kinds if bound >= kth(kind)]
        if wanted:
            top = ceiling(phrase)
            wanted = [kind for kind in wanted if top >= kth(kind)]
        if wanted:
            others = [p for p in present if p != phrase]
            run(f"{phrase} NOT {_any(others)}" if others else phrase, wanted)
    return {kind: best_first(best[kind], limit) for kind in kinds}


def region_reach(
    phrases: Sequence[str], bounds: Sequence[float], ceiling: Callable[[str], float]
) -> float:
    """The most a row holding only ``phrases`` can score: each phrase adds at most the
    lower of its bound and its ceiling, plus a relative ``SLACK`` for rounding.

    A phrase adds to a row's OR score exactly what it scores there alone (same idf,
    same document length), so its ceiling caps that share in every row.
    """
    total = sum(min(bound, ceiling(p)) for p, bound in zip(phrases, bounds, strict=True))
    return total * (1.0 + SLACK)


def best_first(scores: dict[int, float], limit: int) -> Ranked:
    """The ``limit`` best (unit id, score) pairs: higher score first, then lower id."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


def top_per_kind(
    conn: sqlite3.Connection,
    expression: str,
    sources: Sequence[str],
    kinds: Sequence[UnitKind],
    count: int,
) -> dict[UnitKind, Ranked]:
    """The best ``count`` units of each kind in ``sources`` for one MATCH expression.

    One statement for all kinds: its rows come best first and reading stops once every
    kind is full (a kind short of ``count`` reads the match to its end).
    """
    wanted = list(dict.fromkeys(kinds))
    found: dict[UnitKind, Ranked] = {kind: [] for kind in wanted}
    if not wanted or count <= 0:
        return found
    sql = (
        "SELECT u.kind, u.id, bm25(units_fts) AS b FROM units_fts "
        "JOIN units u ON u.id = units_fts.rowid "
        f"WHERE units_fts MATCH ? AND u.source IN ({', '.join('?' * len(sources))})"
    )
    args: list[object] = [expression, *sources]
    if set(wanted) != set(ALL_KINDS):
        sql += f" AND u.kind IN ({', '.join('?' * len(wanted))})"
        args += wanted
    sql += " ORDER BY b, u.id"
    if len(wanted) == 1:
        sql += " LIMIT ?"  # SQLite keeps only the best rows while sorting
        args.append(count)
    cursor = conn.execute(sql, args)
    try:
        open_kinds = len(wanted)
        for kind, uid, b in cursor:
            ranked = found[kind]
            if len(ranked) < count:
                ranked.append((int(uid), -float(b)))
                if len(ranked) == count:
                    open_kinds -= 1
                    if open_kinds == 0:
                        break
    finally:
        cursor.close()
    return found


def ranked_units(
    conn: sqlite3.Connection,
    stats: TermStats,
    expression: str,
    sources: Sequence[str],
    kinds: Sequence[UnitKind],
    limit: int,
) -> dict[UnitKind, Ranked]:
    """The top ``limit`` of each kind, best first, in one read transaction (one snapshot).

    An OR of quoted terms over many rows goes through :func:`top_units`; any other
    expression, and a small match, through one full query.
    """
    wanted = list(dict.fromkeys(kinds))

    def query(match: str, chosen: Sequence[UnitKind], count: int) -> dict[UnitKind, Ranked]:
        return top_per_kind(conn, match, sources, chosen, count)

    conn.execute("BEGIN")
    try:
        phrases = split_phrases(expression)
        if phrases is not None and len(phrases) > 1:
            refresh_stats(conn, stats)
            frequencies = phrase_frequencies(conn, stats, phrases)
            if sum(frequencies.values()) > PLAIN_ROWS:
                return top_units(
                    query,
                    wanted,
                    phrases,
                    frequencies,
                    stats.rows,
                    limit,
                    lambda phrase: term_ceiling(conn, stats, phrase),
                )
        return query(expression, wanted, limit)
    finally:
        conn.execute("COMMIT")
