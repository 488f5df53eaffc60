"""Hybrid retrieval: BM25 and vector signals over blocks and chunks, fused and boosted.

One ``search()`` call runs up to four store queries (keyword and vector, over
``block`` and ``chunk`` units) plus, with feedback on, one more block vector
query for the expanded query vector; it fuses each kind (relative-score fusion by
default, RRF or weighted on request), lets blocks inherit relevance from their
chunks and the blocks around them (an answer from its question), demotes lines
attributed to someone other than the query names (``attribution``), applies the
bounded recency boost, leaves out (or marks) lines of retired facts (``lifecycle``),
scores hits by the calibrated confidence (``calibration``), then optional MMR,
``min_score`` and merges spans per file.
With no embedder the search is keyword-only. The query embedding and the first
vector queries run in a worker thread while the full-text pass runs in the
caller's (stores answer vector queries on a connection of their own).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from memdir.embeddings.base import Embedder
from memdir.errors import InvalidInputError
from memdir.machine import worker_pool
from memdir.search.attribution import apply_attribution
from memdir.search.calibration import choose_calibration
from memdir.search.feedback import coherence
from memdir.search.fusion import (
    fuse_reciprocal_rank,
    fuse_relative,
    fuse_weighted,
    normalise_bm25,
    normalise_cosine,
    scale_to_best,
)
from memdir.search.lifecycle import (
    Retired,
    RetiredLines,
    apply_lifecycle,
    current_only,
    read_retired,
)
from memdir.search.mmr import select_diverse
from memdir.search.neighbours import find_neighbours, neighbour_guesses
from memdir.search.query import keyword_query, named_terms
from memdir.search.recency import recency_multiplier
from memdir.search.results import Evidence, SearchHit, SearchOptions, SearchResults
from memdir.search.snippets import Candidate, merge_spans, neighbour_relevance, score_blocks
from memdir.store.contracts import IndexReader, KeywordQuery, ScoredId, Unit, UnitKind

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 10_000
MIN_COSINE = 0.0
RELATIVE_COSINE = 0.5
KINDS: tuple[UnitKind, ...] = ("block", "chunk")  # one full-text pass serves both


@dataclass(frozen=True)
class Signals:
    """The ranked lists one kind of unit got from the store."""

    keyword: list[ScoredId]
    vector: list[ScoredId]


def search(
    store: IndexReader,
    embedder: Embedder | None,
    query: str,
    *,
    sources: Sequence[str],
    options: SearchOptions,
    now: datetime | None = None,
    facts: RetiredLines | None = None,
) -> SearchResults:
    """Rank the memory of ``sources`` for ``query``; see the module docstring.

    ``facts`` names, for the files a search reads, the note lines that hold no current
    fact (``memdir.search.lifecycle``): left out, or with ``options.include_history``
    returned last and marked.
    """
    if not query.strip():
        raise InvalidInputError("search query is empty; pass the words to look for")
    text = query[:MAX_QUERY_CHARS]
    keywords = keyword_query(text, options.max_terms)
    limit = options.candidates
    # The query embedding and the first vector searches (onnxruntime or HTTP, numpy and
    # the store's own vector connection, all releasing the GIL) run in a worker thread
    # while the caller's thread asks the full-text index: the two overlap.
    pending = (
        _embedding_pool().submit(embed_and_search, store, embedder, text, sources, limit)
        if embedder
        else None
    )
    words = store.keyword_search(keywords, sources, KINDS, limit) if keywords else {}
    block_words, chunk_words = words.get("block", []), words.get("chunk", [])
    # While the worker embeds, fetch the keyword candidates and their likely neighbours.
    units = store.get_units(prefetch_ids(block_words, chunk_words)) if pending else {}
    vector, nearest = pending.result() if pending is not None else (None, {})
    first_vectors = nearest.get("block", [])
    blocks = Signals(block_words, first_vectors)
    chunks = Signals(chunk_words, nearest.get("chunk", []))
    # how much of the query each keyword candidate block holds: for fusion and confidence
    block_coverage = (
        store.keyword_coverage(keywords, [item.unit_id for item in block_words])
        if keywords
        else None
    )
    block_weight = keyword_strength(store, keywords, blocks, options, block_coverage)
    block_scores, block_parts = fuse_signals(blocks, options, block_weight)
    chunk_scores, _ = fuse_signals(
        chunks, options, keyword_strength(store, keywords, chunks, options)
    )
    if vector is not None and options.feedback > 0.0 and block_scores:
        vector = expand_query(
            store, vector, block_scores, options.feedback, coherent=options.feedback_coherence
        )
        again = _embedding_pool().submit(nearest_vectors, store, vector, sources, "block", limit)
        # While the worker runs the feedback search, fetch what the first lists need.
        fetch_missing(store, units, block_scores, chunk_scores, options)
        # chunks keep the first vector search: one extra KNN query, not two
        blocks = Signals(blocks.keyword, again.result())
        block_scores, block_parts = fuse_signals(blocks, options, block_weight)
    for item in first_vectors:  # the query's own cosine: what the confidence reads
        block_parts.setdefault(item.unit_id, {})["cosine"] = item.score
    seeds = fetch_missing(store, units, block_scores, chunk_scores, options)
    near = neighbour_pool(store, units, block_scores, seeds, options)
    candidates = score_blocks(block_scores, chunk_scores, units, options.chunk_share, near)
    apply_attribution(text, candidates, options.attribution_demote)
    apply_recency(candidates, block_parts, options, now or datetime.now(UTC))
    retired: Retired = {}
    if facts is not None:  # what memory no longer holds true is no evidence it knows
        units.update(store.get_units({i.unit_id for i in first_vectors} - units.keys()))
        retired = read_retired(facts, sources, {(u.source, u.path) for u in units.values()})
    candidates = apply_lifecycle(candidates, retired, options.include_history)
    evidence = measure_evidence(
        block_coverage, current_only(block_words, units, retired),
        current_only(first_vectors, units, retired), vector is not None,
    )  # fmt: skip
    evidence = replace(evidence, unseen_names=unseen_names(store, text, sources))
    calibration = options.calibration or choose_calibration(
        embedder.provider if embedder else None, embedder.model if embedder else None,
        evidence.keyword is not None,
    )  # fmt: skip
    confidence = (
        calibration.confidence(evidence.cosine, evidence.keyword, bool(evidence.unseen_names))
        if calibration
        else None
    )
    apply_confidence(candidates, confidence)
    ranked = sorted(
        (c for c in candidates if c.score >= options.min_score),
        key=lambda c: (c.retired is not None, -c.relevance, c.unit.path, c.start_line),
    )
    if options.mmr_lambda is not None:
        ranked = diversify(store, ranked, options.mmr_lambda, options.max_results * 3)
    hits = tuple(to_hit(c) for c in merge_spans(ranked, options.max_results, options.absorb_ratio))
    below_floor = not hits and bool(candidates)
    notice = (
        ""
        if hits
        else explain_empty(
            store, sources, query, options, below_floor, confidence, evidence.unseen_names
        )
    )
    return SearchResults(
        hits=hits, notice=notice, confidence=confidence, evidence=evidence, below_floor=below_floor
    )


def measure_evidence(
    coverage: dict[int, float] | None,
    block_words: list[ScoredId],
    block_vectors: list[ScoredId],
    embedded: bool,
) -> Evidence:
    """The query's best absolute evidence (``memdir.search.calibration``): the top block
    cosine (None without a query vector) and the largest share of the query's information
    a keyword candidate block holds, from ``coverage`` (``IndexReader.keyword_coverage`` of
    the keyword candidates; None when the store cannot measure it or the query has no
    words)."""
    cosine = max((item.score for item in block_vectors), default=0.0) if embedded else None
    if coverage is None:
        return Evidence(cosine=cosine, keyword=None)
    keyword = max((coverage.get(item.unit_id, 0.0) for item in block_words), default=0.0)
    return Evidence(cosine=cosine, keyword=keyword)


def unseen_names(store: IndexReader, text: str, sources: Sequence[str]) -> tuple[str, ...]:
    """The words ``text`` names something by (``query.named_terms``) that no unit of
    ``sources`` holds: memory has never heard of them."""
    unseen = []
    for name in named_terms(text):
        found = store.keyword_search(KeywordQuery((name,)), sources, ("block",), 1)
        if not found.get("block"):
            unseen.append(name)
    return tuple(unseen)


def apply_confidence(candidates: list[Candidate], confidence: float | None) -> None:
    """Score each candidate: the confidence times its relevance relative to the best
    current one (or, uncalibrated, its relevance as it is)."""
    top = max((c.relevance for c in candidates if c.retired is None), default=0.0)
    for candidate in candidates:
        if confidence is None:
            candidate.score = candidate.relevance
            continue
        share = min(1.0, candidate.relevance / top) if top > 0.0 else 0.0
        candidate.score = confidence * share
        candidate.breakdown["confidence"] = confidence
        candidate.breakdown["share"] = share


def fetch_missing(
    store: IndexReader,
    units: dict[int, Unit],
    block_scores: dict[int, float],
    chunk_scores: dict[int, float],
    options: SearchOptions,
) -> list[int]:
    """Add the candidates and the likely neighbours of the lending blocks to ``units``
    (only those not there yet); returns the lending blocks."""
    seeds = lending_blocks(block_scores, options)
    wanted = set(block_scores) | set(chunk_scores) | neighbour_guesses(seeds)
    units.update(store.get_units(wanted - units.keys()))
    return seeds


def prefetch_ids(block_words: list[ScoredId], chunk_words: list[ScoredId]) -> set[int]:
    """The units search will surely read: keyword candidates and the blocks around them."""
    blocks = [item.unit_id for item in block_words]
    return {*blocks, *(item.unit_id for item in chunk_words), *neighbour_guesses(blocks)}


def embed_and_search(
    store: IndexReader, embedder: Embedder, text: str, sources: Sequence[str], limit: int
) -> tuple[npt.NDArray[np.float32], dict[UnitKind, list[ScoredId]]]:
    """The query vector and its vector candidates of each kind (one worker-thread task)."""
    vector = embedder.embed_query(text)
    return vector, {kind: nearest_vectors(store, vector, sources, kind, limit) for kind in KINDS}


def lending_blocks(block_scores: dict[int, float], options: SearchOptions) -> list[int]:
    """The blocks whose neighbours inherit from them: the ``options.candidates`` best.

    The weaker ones would lend too little to matter, and each costs up to four more
    units to fetch. None when neighbours and answers are off.
    """
    if options.neighbour_share <= 0.0 and options.answer_share <= 0.0:
        return []
    return sorted(block_scores, key=lambda i: -block_scores[i])[: options.candidates]


def neighbour_pool(
    store: IndexReader,
    units: dict[int, Unit],
    block_scores: dict[int, float],
    seeds: list[int],
    options: SearchOptions,
) -> dict[int, float]:
    """What the blocks around the ``seeds`` inherit (units not yet fetched join ``units``)."""
    if not seeds:
        return {}
    adjacency = find_neighbours(store, units, seeds)
    return neighbour_relevance(
        block_scores, adjacency, units, options.neighbour_share, options.answer_share
    )


def apply_recency(
    candidates: list[Candidate],
    parts: dict[int, dict[str, float]],
    options: SearchOptions,
    now: datetime,
) -> None:
    """Multiply each candidate's relevance by its bounded recency boost; fill the breakdown."""
    boosts: dict[str, float] = {}  # candidates share few files
    for candidate in candidates:
        path = candidate.unit.path
        boost = boosts.get(path)
        if boost is None:
            boost = boosts[path] = recency_multiplier(
                path, now, options.recency_half_life_days, options.recency_max_boost
            )
        candidate.breakdown.update(parts.get(candidate.unit.id, {}))
        candidate.breakdown["relevance"] = candidate.relevance
        candidate.breakdown["recency"] = boost
        candidate.relevance *= boost
        candidate.breakdown["final"] = candidate.relevance


def nearest_vectors(
    store: IndexReader,
    vector: npt.NDArray[np.float32] | None,
    sources: Sequence[str],
    kind: UnitKind,
    limit: int,
) -> list[ScoredId]:
    """The vector candidates of one unit kind (none in keyword-only mode)."""
    if vector is None:
        return []
    return keep_similar(store.vector_search(vector, sources, kind, limit))


QUERY_POOL = "memdir-query-embed"  # query embeddings and the vector searches beside them


def _embedding_pool() -> ThreadPoolExecutor:
    """The worker threads a search hands its query embedding and vector searches to."""
    return worker_pool(QUERY_POOL, 2)


def keep_similar(found: list[ScoredId]) -> list[ScoredId]:
    """Drop neighbours that are no evidence: nearest neighbours always exist.

    A neighbour counts when its cosine is positive and at least ``RELATIVE_COSINE``
    of the best one's, so rank fusion does not promote the merely nearest.
    """
    if not found:
        return []
    floor = cosine_floor(found)
    return [item for item in found if item.score > floor]


def cosine_floor(found: Sequence[ScoredId]) -> float:
    """The cosine a vector neighbour must exceed to count (see ``keep_similar``)."""
    return max(MIN_COSINE, RELATIVE_COSINE * max(item.score for item in found))


def expand_query(
    store: IndexReader,
    vector: npt.NDArray[np.float32],
    scores: dict[int, float],
    weight: float,
    top: int = 3,
    *,
    coherent: bool = False,
) -> npt.NDArray[np.float32]:
    """Pseudo-relevance feedback: move the query towards its best blocks (Rocchio).

    With ``coherent``, ``weight`` is scaled by how much those blocks agree
    (``feedback.coherence``).
    """
    best = sorted(scores, key=lambda i: -scores[i])[:top]
    vectors = list(store.get_vectors(best).values())
    if not vectors:
        return vector
    if coherent:
        weight *= coherence(vectors)
    moved = vector + weight * np.mean(np.stack(vectors), axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm).astype(np.float32) if norm > 0 else vector


def keyword_strength(
    store: IndexReader,
    query: KeywordQuery,
    signals: Signals,
    options: SearchOptions,
    coverage: dict[int, float] | None = None,
) -> float:
    """How much one kind's keyword list may weigh in fusion, from 0 to 1.

    Relative fusion scales each list to its own best, so a keyword list whose best unit
    shares one common word with a question ("called", "use") would weigh as much as one
    that holds the whole question, and outrank a strong semantic match. The weight
    follows the largest share of the query's information one keyword candidate holds
    (``IndexReader.keyword_coverage``): nothing up to ``keyword_gate[0]``, all of it from
    ``keyword_gate[1]``, linear between. Without a vector list, or where the store cannot
    measure coverage, keywords keep their whole weight. ``coverage``, when the caller has
    it already, is that of the keyword list's units.
    """
    if options.keyword_gate is None or not signals.keyword or not signals.vector:
        return 1.0
    if coverage is None:
        coverage = store.keyword_coverage(query, [item.unit_id for item in signals.keyword])
    if coverage is None:
        return 1.0
    low, high = options.keyword_gate
    best = max(coverage.values(), default=0.0)
    return min(1.0, max(0.0, (best - low) / (high - low)))


def fuse_signals(
    signals: Signals, options: SearchOptions, keyword_weight: float = 1.0
) -> tuple[dict[int, float], dict[int, dict[str, float]]]:
    """Fused relevance per unit id and the per-signal values behind it; the keyword
    list's weight is scaled by ``keyword_weight`` (``keyword_strength``)."""
    text_weight = options.text_weight * keyword_weight
    parts: dict[int, dict[str, float]] = {}
    text_norm: dict[int, float] = {}
    cosine_norm: dict[int, float] = {}
    for item in signals.keyword:
        text_norm[item.unit_id] = normalise_bm25(item.score)
        parts.setdefault(item.unit_id, {}).update(bm25_raw=item.score, bm25=text_norm[item.unit_id])
    for item in signals.vector:
        cosine_norm[item.unit_id] = normalise_cosine(item.score)
        parts.setdefault(item.unit_id, {})["vector"] = item.score
    if options.fusion == "relative":
        text_scaled = scale_to_best({i.unit_id: max(0.0, i.score) for i in signals.keyword})
        cosines = {i.unit_id: i.score for i in signals.vector}
        floor = cosine_floor(signals.vector) if signals.vector else 0.0
        cosine_scaled = scale_to_best(cosines, floor)
        fused = fuse_relative(text_scaled, cosine_scaled, text_weight, options.vector_weight)
    elif options.fusion == "weighted":
        fused = fuse_weighted(text_norm, cosine_norm, text_weight, options.vector_weight)
    else:
        lists = [ranked for ranked in (signals.keyword, signals.vector) if ranked]
        fused = fuse_reciprocal_rank(lists, options.rrf_k)
    return fused, parts


def diversify(
    store: IndexReader, ranked: list[Candidate], lambda_: float, limit: int
) -> list[Candidate]:
    """Re-order the head of the ranking by MMR over the stored unit vectors."""
    head = ranked[:limit]
    by_id = {c.unit.id: c for c in head}
    vectors = store.get_vectors(by_id)
    order = select_diverse([(c.unit.id, c.relevance) for c in head], vectors, lambda_, limit)
    return [by_id[unit_id] for unit_id, _ in order] + ranked[limit:]


def to_hit(candidate: Candidate) -> SearchHit:
    return SearchHit(
        path=candidate.unit.path,
        source=candidate.unit.source,
        start_line=candidate.start_line,
        end_line=candidate.end_line,
        text=candidate.text,
        score=round(candidate.score, 6),
        breakdown={k: round(v, 6) for k, v in candidate.breakdown.items()},
        retired=candidate.retired,
    )


def explain_empty(
    store: IndexReader,
    sources: Sequence[str],
    query: str,
    options: SearchOptions,
    below_floor: bool,
    confidence: float | None,
    unseen: Sequence[str] = (),
) -> str:
    """Say why nothing came back: an empty memory, nothing above the floor, or no match."""
    files = store.count_files(sources)
    if files == 0:
        return (
            "no memory files indexed yet: write daily notes (memory/YYYY-MM-DD.md), MEMORY.md "
            "or save facts; files written outside memdir appear after `memdir index sync`"
        )
    shown = query if len(query) <= 60 else query[:57] + "..."
    searched = f"{files} file{'s' if files != 1 else ''}"
    if below_floor and confidence is not None:
        return (
            f"nothing relevant found for {shown!r} in {searched}: the best match scores "
            f"{confidence:.2f}, below min_score {options.min_score:g}{_never_seen(unseen)}"
        )
    if below_floor:
        return f"nothing scored above min_score {options.min_score:g} in {searched} for {shown!r}"
    return f"nothing matched {shown!r} in {searched}"


def _never_seen(names: Sequence[str]) -> str:
    if not names:
        return ""
    quoted = ", ".join(repr(name) for name in names)
    return f"; memory never mentions {quoted}"
