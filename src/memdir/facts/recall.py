"""Recall: find the facts that answer a query, valid at a point in time.

Three tiers. (1) The query is matched to categories (keyword cues, else
embedding similarity to the category centroids, see ``categories``). (2) Facts
of those categories come first, if they are at least ``TIER_RELATIVE`` times as
relevant as the best fact overall. (3) The remaining places up to ``limit`` are
filled from a flat ranking of all facts; when no category matched, the flat
ranking is the whole answer.

Relevance is hybrid. FTS5 ranks the facts by ``bm25()`` (reported normalised as
``x / (1 + x)`` of ``x = -bm25``), the embedder ranks them by cosine; the two
rankings are fused by reciprocal rank: ``fused = sum(1 / (RRF_K + rank)) /
(lists / (RRF_K + 1))`` over the lists a fact appears in, so 1.0 means first in
every list. ``RRF_K`` is 10, smaller than search's 60, because fact lists are
short and salience multiplies the result: with k=10 losing one rank costs
about 8 %, so salience (at most +25 %, see ``salience``) can lift a well-used
fact by a few places but never from the bottom. ``score = fused * salience``.

Only facts valid at ``as_of`` (default: now) and not forgotten are returned;
every returned fact counts as accessed (``access_count + 1``, ``last_access =
now``). Without an embedder, recall is keyword-only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Literal

from memdir.embeddings.base import Embedder, Vectors
from memdir.errors import InvalidInputError
from memdir.facts.categories import check_category, match_query_categories
from memdir.facts.salience import fact_salience
from memdir.store.contracts import EmbedderIdentity, FactStore, KeywordQuery
from memdir.store.fact_records import Fact, FactFilter
from memdir.store.identity import check_fact_identity

RRF_K = 10
TIER_RELATIVE = 0.5
MAX_LIMIT = 100
MAX_QUERY_CHARS = 2_000

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    """a about after all am an and any are as at be been but by can could did do does for
    from had has have he her his how i if in into is it its me my no not of on or our she so
    than that the their them then there these they this to too us was we were what when where
    which while who whom why will with would you your s t""".split()  # noqa: SIM905
)


@dataclass(frozen=True)
class ScoreBreakdown:
    """How a recalled fact scored. Ranks are 1-based; None: not found by that signal."""

    keyword: float | None  # normalised BM25, x / (1 + x)
    keyword_rank: int | None
    vector: float | None  # cosine similarity
    vector_rank: int | None
    fused: float  # reciprocal-rank fusion, 1.0 = first everywhere
    salience: float
    tier: Literal["category", "flat"]
    categories: tuple[str, ...]  # the categories the query matched
    confidence: float | None = None  # calibrated: memory holds a relevant fact (RecallFloor)


@dataclass(frozen=True)
class RecallFloor:
    """What makes recall scores calibrated confidences, as search's are
    (``memdir.search.calibration``): ``confidence`` turns the best fact's cosine into the
    confidence that memory holds a relevant fact; facts scoring below ``min_score`` are
    not returned (and not counted as accessed)."""

    confidence: Callable[[float], float]
    min_score: float


@dataclass(frozen=True)
class RecalledFact:
    fact: Fact
    score: float  # fused * salience
    breakdown: ScoreBreakdown


def build_fact_query(text: str, max_terms: int = 24) -> KeywordQuery:
    """The query's content words (all of its words when it has no other), for the store
    to rank by BM25 over any of them."""
    words = [w.lower() for w in _WORD.findall(text) if w.strip("_")]
    chosen = [w for w in words if w not in _STOP] or words
    return KeywordQuery(terms=tuple(dict.fromkeys(chosen))[:max_terms])


def utc_now() -> datetime:
    return datetime.now(UTC)


def check_embedder(store: FactStore, embedder: Embedder) -> None:
    """Raise ``IndexMismatchError`` when the stored fact vectors come from another embedder."""
    wanted = EmbedderIdentity(embedder.provider, embedder.model, embedder.dimensions)
    recorded = store.identity
    if recorded is not None:
        check_fact_identity(str(store.path), recorded, wanted)


def _check_query(query: str, limit: int) -> None:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError(f"the recall query {query!r} is empty; pass a question or words")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInputError(
            f"the recall query is {len(query):,} characters; keep it under {MAX_QUERY_CHARS:,}"
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(
            f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}"
        )


def fuse_ranks(lists: Sequence[Sequence[tuple[str, float]]]) -> dict[str, float]:
    """Reciprocal-rank fusion of ranked (id, score) lists; 1.0 = first in every non-empty list."""
    used = [ranked for ranked in lists if ranked]
    fused: dict[str, float] = {}
    for ranked in used:
        for rank, (fid, _) in enumerate(ranked, start=1):
            fused[fid] = fused.get(fid, 0.0) + 1.0 / (RRF_K + rank)
    best = max(len(used), 1) / (RRF_K + 1)
    return {fid: value / best for fid, value in fused.items()}


def _signals(
    store: FactStore,
    embedder: Embedder | None,
    query: str,
    filt: FactFilter,
    pool: int,
) -> tuple[list[tuple[str, float]], list[tuple[str, float]], Vectors | None]:
    keywords = build_fact_query(query)
    keyword = store.keyword_search(keywords, filt, pool) if keywords else []
    if embedder is None:
        return keyword, [], None
    check_embedder(store, embedder)
    vector = embedder.embed_query(query)
    return keyword, store.vector_search(vector, filt, pool), vector


def recall(
    store: FactStore,
    embedder: Embedder | None,
    query: str,
    *,
    category: str | None = None,
    as_of: datetime | None = None,
    limit: int = 5,
    now: datetime | None = None,
    record_access: bool = True,
    floor: RecallFloor | None = None,
) -> list[RecalledFact]:
    """The facts that best answer ``query``, valid at ``as_of`` (module docstring).

    With ``floor`` (and an embedder), a fact's score is the confidence from the best
    fact's cosine times its relevance relative to the best fact's, as a search hit's is,
    and facts below ``floor.min_score`` are left out: a question memory cannot answer
    recalls nothing and touches no access count."""
    _check_query(query, limit)
    now = now or utc_now()
    categories = None if category is None else (check_category(category),)
    filt = FactFilter(as_of=as_of or now, categories=categories)
    keyword, vector, qvec = _signals(store, embedder, query, filt, max(limit * 4, 20))
    fused = fuse_ranks([keyword, vector])
    facts = store.get_facts(fused)
    if not facts:
        return []
    known = sorted({f.category for f in facts.values()})
    matched = categories or match_query_categories(query, embedder, qvec, known)
    kw_rank = {fid: (rank, s) for rank, (fid, s) in enumerate(keyword, start=1)}
    vec_rank = {fid: (rank, s) for rank, (fid, s) in enumerate(vector, start=1)}
    scored: list[RecalledFact] = []
    for fid, fact in facts.items():
        sal = fact_salience(fact, now)
        kw, vec = kw_rank.get(fid), vec_rank.get(fid)
        breakdown = ScoreBreakdown(
            keyword=None if kw is None else kw[1] / (1.0 + kw[1]),
            keyword_rank=None if kw is None else kw[0],
            vector=None if vec is None else vec[1],
            vector_rank=None if vec is None else vec[0],
            fused=fused[fid],
            salience=sal,
            tier="flat",
            categories=tuple(matched),
        )
        scored.append(RecalledFact(fact, fused[fid] * sal, breakdown))
    chosen = _tiered(scored, set(matched), limit)
    if floor is not None and vector:
        chosen = _calibrated(chosen, floor.confidence(max(s for _, s in vector)), floor.min_score)
    if record_access and chosen:
        store.record_access([r.fact.id for r in chosen], now)
    return chosen


def _tiered(scored: list[RecalledFact], matched: set[str], limit: int) -> list[RecalledFact]:
    scored.sort(key=lambda r: (-r.score, r.fact.id))
    best = scored[0].score
    first = [r for r in scored if r.fact.category in matched and r.score >= TIER_RELATIVE * best][
        :limit
    ]
    taken = {r.fact.id for r in first}
    tiered = [RecalledFact(r.fact, r.score, _with_tier(r.breakdown, "category")) for r in first]
    rest = [r for r in scored if r.fact.id not in taken][: limit - len(tiered)]
    return tiered + rest


def _calibrated(
    chosen: list[RecalledFact], confidence: float, min_score: float
) -> list[RecalledFact]:
    """Scores as confidence x relevance relative to the best; those below ``min_score`` go."""
    best = max((r.score for r in chosen), default=0.0)
    out = []
    for r in chosen:
        share = min(1.0, r.score / best) if best > 0.0 else 0.0
        score = confidence * share
        if score >= min_score:
            out.append(RecalledFact(r.fact, score, replace(r.breakdown, confidence=confidence)))
    return out


def _with_tier(breakdown: ScoreBreakdown, tier: Literal["category", "flat"]) -> ScoreBreakdown:
    return replace(breakdown, tier=tier)


def list_facts(
    store: FactStore,
    category: str | None = None,
    as_of: datetime | None = None,
    include_superseded: bool = False,
    include_forgotten: bool = False,
) -> list[Fact]:
    """Facts oldest first: by default those valid now (never superseded) and not forgotten.

    With ``as_of``: those recorded by then and (unless ``include_superseded``)
    still valid then. Listing does not count as access.
    """
    categories = None if category is None else (check_category(category),)
    return store.list_facts(FactFilter(as_of, categories, include_superseded, include_forgotten))
