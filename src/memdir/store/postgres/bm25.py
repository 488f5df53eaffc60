"""Keyword ranking on PostgreSQL: SQLite's BM25, over a bounded pool of candidates.

The scores are those of the SQLite backend (``memdir.store.sqlite.keywords.ranker``,
itself equal to FTS5's ``bm25()``): the same FTS5 tokens (``terms.py``), the same
statistics over the whole index (unit count, average length, units per term, kept
by triggers: ``schema.py``), the same idf floor and constants, summed query token
by query token in the same order; ties go to the lower unit id.

Only candidates are scored, never every match: PostgreSQL's ``ts_rank`` family
would rank each of the hundreds of thousands of units that hold a common word. A
search reads, for each kind, at most ``POOL`` units:

1. The query's *rare* terms in the scope (fewest units first, while together they
   hold at most ``POOL`` units): every unit holding one is fetched and scored.
   When that is every term, the ranking is exact and complete.
2. Units holding only *common* terms fall into *regions*, one per set of common
   terms a unit holds exactly. A region's units score below the sum of its terms'
   largest contributions (``idf * (k1 + 1)``), so regions are read best bound
   first, and a kind stops once a region's bound cannot beat its ``limit``-th
   score: the ranking is then still exact. It becomes approximate only when a kind
   reaches ``POOL`` units or the walk ``MAX_REGIONS`` regions first.

Each candidate query goes through the GIN index over ``(scope, terms)``: when the
scope holds a small share of a kind's units (``SELECTIVE``), its source and kind
lexemes join the query, so the index intersects the workspace's postings with the
terms' and other workspaces cost nothing.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memdir.store.contracts import UnitKind
from memdir.store.sqlite.keywords.ranker import K1, B, fts5_idf, smoothed_idf

if TYPE_CHECKING:
    import psycopg

POOL = 2_000
MAX_REGIONS = 64
SELECTIVE = 0.25

Ranked = list[tuple[int, float]]

_COUNTS = (
    "SELECT kind, sum(units)::bigint, sum(tokens)::bigint, "
    "coalesce(sum(units) FILTER (WHERE source = ANY(%s)), 0)::bigint "
    "FROM source_counts GROUP BY kind"
)
_TERMS = (
    "SELECT term, sum(units)::bigint, "
    "coalesce(sum(units) FILTER (WHERE source = ANY(%s)), 0)::bigint "
    "FROM term_counts WHERE term = ANY(%s) GROUP BY term"
)
# The query's lexemes a unit holds and their counts (a lexeme's one position).
_HELD = "unnest(ts_filter(setweight(u.terms, 'A', %s::text[]), '{a}')) AS x"
_BRANCH = (
    "(SELECT u.id, u.kind, u.length, x.lexeme, x.positions[1] FROM "
    "(SELECT id, kind, length, terms FROM units WHERE terms @@ %s::tsquery {scope}"
    "AND source = ANY(%s) AND kind = %s LIMIT %s) AS u, "
    "unnest(ts_filter(setweight(u.terms, 'A', %s::text[]), '{{a}}')) AS x)"
)


@dataclass(frozen=True)
class Stats:
    """What BM25 needs of the index, and the scope's share of it."""

    rows: int  # units in the whole index
    tokens: int  # their tokens
    units: dict[str, int]  # units of each kind in the whole index
    scoped_units: dict[str, int]  # ... in the searched sources
    df: dict[str, int]  # units holding each term, in the whole index
    scoped_df: dict[str, int]  # ... in the searched sources


def read_stats(
    conn: psycopg.Connection[Any], lexemes: Sequence[str], sources: Sequence[str]
) -> Stats:
    rows = conn.execute(_COUNTS, (list(sources),)).fetchall()
    terms = conn.execute(_TERMS, (list(sources), list(lexemes))).fetchall()
    return Stats(
        rows=sum(int(r[1]) for r in rows),
        tokens=sum(int(r[2]) for r in rows),
        units={str(r[0]): int(r[1]) for r in rows},
        scoped_units={str(r[0]): int(r[3]) for r in rows},
        df={str(r[0]): int(r[1]) for r in terms},
        scoped_df={str(r[0]): int(r[2]) for r in terms},
    )


@dataclass
class Scorer:
    """BM25 of a unit from its length and the counts of the query's lexemes in it."""

    tokens: list[str]  # the query's lexemes held by the index, in order, repeats kept
    idf: dict[str, float]
    avgdl: float

    @classmethod
    def of(cls, tokens: Sequence[str], stats: Stats) -> Scorer:
        held = [t for t in tokens if stats.df.get(t, 0) > 0]
        idf = {t: fts5_idf(stats.df[t], stats.rows) for t in held}
        return cls(held, idf, stats.tokens / stats.rows if stats.rows else 1.0)

    def score(self, length: int, counts: dict[str, int]) -> float:
        # The arithmetic of KeywordRanker._score_parts, in the same order.
        norm = K1 * (1 - B + B * length / self.avgdl)
        total = 0.0
        for token in self.tokens:
            freq = counts.get(token)
            if freq:
                total += self.idf[token] * ((freq * (K1 + 1.0)) / (freq + norm))
        return total

    def bound(self, token: str) -> float:
        """More than ``token`` can add to any unit's score (each occurrence in the query
        adds less than ``idf * (k1 + 1)``)."""
        return self.tokens.count(token) * self.idf[token] * (K1 + 1.0)


@dataclass
class Search:
    """One ranking: the scores found so far per kind, and whether they are complete."""

    kinds: list[UnitKind]
    limit: int
    pool: int = POOL
    max_regions: int = MAX_REGIONS
    scores: dict[str, dict[int, float]] = field(default_factory=dict)
    exact: bool = True
    regions: int = 0

    def __post_init__(self) -> None:
        self.scores = {kind: {} for kind in self.kinds}

    def threshold(self, kind: str) -> float:
        """The ``limit``-th best score of ``kind`` so far (-1 while there are fewer)."""
        found = self.scores[kind]
        return heapq.nlargest(self.limit, found.values())[-1] if len(found) >= self.limit else -1.0

    def room(self, kind: str) -> int:
        return self.pool - len(self.scores[kind])

    def best(self) -> dict[UnitKind, Ranked]:
        return {
            kind: sorted(self.scores[kind].items(), key=lambda item: (-item[1], item[0]))[
                : self.limit
            ]
            for kind in self.kinds
        }


def rank(
    conn: psycopg.Connection[Any],
    tokens: Sequence[str],
    sources: Sequence[str],
    kinds: Sequence[UnitKind],
    limit: int,
    *,
    pool: int = POOL,
    max_regions: int = MAX_REGIONS,
) -> tuple[dict[UnitKind, Ranked], Search]:
    """The best ``limit`` units of each kind in ``sources`` for the OR of ``tokens``
    (lexemes in query order, repeats kept); see the module docstring."""
    search = Search(list(kinds), limit, max(pool, limit), max_regions)
    distinct = list(dict.fromkeys(tokens))
    if not distinct:
        return search.best(), search
    stats = read_stats(conn, distinct, sources)
    scorer = Scorer.of(tokens, stats)
    scoped = stats.scoped_df
    held = sorted((t for t in distinct if scoped.get(t, 0) > 0), key=lambda t: (scoped[t], t))
    if not held:
        return search.best(), search
    rare: list[str] = []
    for term in held:
        if sum(stats.scoped_df[t] for t in rare) + stats.scoped_df[term] > search.pool:
            break
        rare.append(term)
    common = sorted(held[len(rare) :], key=lambda t: -scorer.bound(t))
    fetch = _Fetcher(conn, scorer, stats, sources, search, list(dict.fromkeys(scorer.tokens)))
    if rare:
        fetch(" | ".join(_quoted(t) for t in rare), search.kinds)
    _walk_regions(fetch, search, scorer, common, rare)
    return search.best(), search


def _walk_regions(
    fetch: _Fetcher, search: Search, scorer: Scorer, common: list[str], rare: list[str]
) -> None:
    """Read the regions of ``common`` best bound first until no kind can gain (step 2)."""
    bounds = [scorer.bound(t) for t in common]
    for bound, inside in subsets_by_sum(bounds):
        live = [kind for kind in search.kinds if bound > search.threshold(kind)]
        if not live:
            return
        wanted = [kind for kind in live if search.room(kind) > 0]
        if len(wanted) < len(live) or search.regions >= search.max_regions:
            search.exact = False
        if not wanted or search.regions >= search.max_regions:
            return
        terms = [common[i] for i in inside]
        outside = [t for t in common if t not in terms] + rare
        match = " & ".join([*map(_quoted, terms), *(f"!{_quoted(t)}" for t in outside)])
        fetch(match, wanted)


class _Fetcher:
    """Fetch and score the units of some kinds that match a ``tsquery``."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        scorer: Scorer,
        stats: Stats,
        sources: Sequence[str],
        search: Search,
        lexemes: list[str],
    ) -> None:
        self.conn, self.scorer, self.search = conn, scorer, search
        self.sources, self.lexemes = list(sources), lexemes
        self.scopes = {kind: scope_query(stats, sources, kind) for kind in search.kinds}

    def __call__(self, match: str, kinds: Sequence[UnitKind]) -> None:
        branches: list[str] = []
        args: list[Any] = []
        for kind in kinds:
            scope = self.scopes[kind]
            branches.append(_BRANCH.format(scope="AND scope @@ %s::tsquery " if scope else ""))
            args += [match, *([scope] if scope else []), self.sources, kind]
            args += [self.search.room(kind), self.lexemes]
        rows = self.conn.execute(" UNION ALL ".join(branches), args).fetchall()
        self.search.regions += 1
        found: dict[int, tuple[str, int, dict[str, int]]] = {}
        for uid, unit_kind, length, lexeme, count in rows:
            held = found.setdefault(int(uid), (str(unit_kind), int(length), {}))[2]
            held[str(lexeme)] = int(count)
        for uid, (unit_kind, length, counts) in found.items():
            self.search.scores[unit_kind][uid] = self.scorer.score(length, counts)
        if any(self.search.room(kind) <= 0 for kind in kinds):
            self.search.exact = False  # the region may hold more than the pool took


def scope_query(stats: Stats, sources: Sequence[str], kind: str) -> str:
    """The ``tsquery`` of the scope lexemes of ``kind`` in ``sources``, or '' when the
    scope holds too large a share of the kind for the index to be the better filter."""
    total = stats.units.get(kind, 0)
    if total == 0 or stats.scoped_units.get(kind, 0) >= SELECTIVE * total:
        return ""
    return " | ".join(_quoted(f"s:{s}") for s in dict.fromkeys(sources))


def coverage(
    conn: psycopg.Connection[Any], tokens: Sequence[str], unit_ids: Sequence[int]
) -> dict[int, float]:
    """For each unit, the summed ``smoothed_idf`` of the query's lexemes it holds over
    that of all of them (``KeywordRanker.coverage``)."""
    distinct = list(dict.fromkeys(tokens))
    stats = read_stats(conn, distinct, [])
    weights = {t: smoothed_idf(stats.df.get(t, 0), stats.rows) for t in distinct}
    total = 0.0
    for term in distinct:
        total += weights[term]
    held: dict[int, set[str]] = {int(uid): set() for uid in unit_ids}
    if distinct:
        rows = conn.execute(
            f"SELECT u.id, x.lexeme FROM units u, {_HELD} WHERE u.id = ANY(%s)",
            (distinct, list(held)),
        ).fetchall()
        for uid, lexeme in rows:
            held[int(uid)].add(str(lexeme))
    shares: dict[int, float] = {}
    for uid, terms in held.items():
        share = 0.0
        for term in distinct:
            if term in terms:
                share += weights[term]
        shares[uid] = share / total if total > 0.0 else share
    return shares


def subsets_by_sum(weights: Sequence[float]) -> Iterator[tuple[float, tuple[int, ...]]]:
    """Every non-empty subset of ``weights`` (sorted descending) as (sum, indices), largest
    sum first: the full set, then the complements of the subsets of smallest sum."""
    n = len(weights)
    if n == 0:
        return
    yield sum(weights), tuple(range(n))
    ascending = list(range(n - 1, -1, -1))  # positions by ascending weight
    heap: list[tuple[float, tuple[int, ...]]] = [(weights[ascending[0]], (0,))] if n > 1 else []
    while heap:
        removed, picked = heapq.heappop(heap)
        gone = {ascending[j] for j in picked}
        keep = tuple(i for i in range(n) if i not in gone)
        if keep:
            yield sum(weights[i] for i in keep), keep
        last = picked[-1]
        if last + 1 < n:
            step = weights[ascending[last + 1]]
            heapq.heappush(heap, (removed + step, (*picked, last + 1)))
            swapped = removed - weights[ascending[last]] + step
            heapq.heappush(heap, (swapped, (*picked[:-1], last + 1)))


def _quoted(lexeme: str) -> str:
    """A lexeme as a ``tsquery`` operand (quoted: any text is safe)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"
