"""Score normalisation and rank fusion.

BM25: the store returns ``-bm25()`` (FTS5's bm25 is negative, smaller is
better), so raw keyword scores are ``x >= 0``, larger is better. We map them to
``x / (1 + x)``: monotone, in ``[0, 1)``, and independent of the other hits of
the query, so a lone weak match stays weak (dividing by the top score would
call any best match perfect). Cosines are clipped to ``[0, 1]``.

Relative fusion (the default) scales each signal of one query to ``[0, 1]``
between a floor and its best value: BM25 as ``x / best`` (floor 0), cosines as
``(c - floor) / (best - floor)`` with the floor search's vector cut-off (half
the best cosine). The fused value is ``(w_t * text + w_v * vector) / (w_t + w_v)``
over the signals that returned a list (a missing list does not count as 0 for
everyone). Unlike rank fusion it keeps *how much* better one hit is than the
next, and that margin carries into what blocks inherit from chunks and neighbours.

Reciprocal-rank fusion gives each unit ``sum(1 / (k + rank))`` over the lists
it appears in (rank from 1), divided by the best reachable value
``lists / (k + 1)`` so that first place everywhere scores 1.0. Weighted fusion
is ``(w_v * cosine + w_t * bm25_norm) / (w_v + w_t)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memdir.store.contracts import ScoredId


def normalise_bm25(raw: float) -> float:
    """Map ``-bm25()`` (>= 0, larger is better) into ``[0, 1)``."""
    x = max(0.0, raw)
    return x / (1.0 + x)


def normalise_cosine(cosine: float) -> float:
    """Clip a cosine similarity into ``[0, 1]``."""
    return min(1.0, max(0.0, cosine))


def fuse_reciprocal_rank(lists: Sequence[Sequence[ScoredId]], k: int = 60) -> dict[int, float]:
    """RRF over ranked lists, normalised so rank 1 in every list gives 1.0."""
    if not lists:
        return {}
    fused: dict[int, float] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            fused[item.unit_id] = fused.get(item.unit_id, 0.0) + 1.0 / (k + rank)
    best = len(lists) / (k + 1)
    return {unit_id: value / best for unit_id, value in fused.items()}


def scale_to_best(scores: Mapping[int, float], floor: float = 0.0) -> dict[int, float]:
    """Map scores into ``[0, 1]``: ``floor`` (or less) gives 0, the best score 1."""
    if not scores:
        return {}
    best = max(scores.values())
    span = best - floor
    if span <= 0.0:
        return dict.fromkeys(scores, 1.0)
    return {i: max(0.0, (v - floor) / span) for i, v in scores.items()}


def fuse_relative(
    text: Mapping[int, float],
    vector: Mapping[int, float],
    text_weight: float,
    vector_weight: float,
) -> dict[int, float]:
    """Weighted sum of signals already scaled by ``scale_to_best``.

    Only signals with a list take part, so keyword-only search (or a query no
    keyword matches) still ranks its best unit at 1.0. When every signal that
    answered has weight 0, they count equally.
    """
    present = [(w, s) for w, s in ((text_weight, text), (vector_weight, vector)) if s]
    total = sum(w for w, _ in present)
    if total <= 0.0:
        present = [(1.0, s) for _, s in present]
        total = float(len(present))
    if not present:
        return {}
    ids = set().union(*(s.keys() for _, s in present))
    return {i: sum(w * s.get(i, 0.0) for w, s in present) / total for i in ids}


def fuse_weighted(
    text: Mapping[int, float],
    vector: Mapping[int, float],
    text_weight: float,
    vector_weight: float,
) -> dict[int, float]:
    """Weighted sum of normalised signals (missing signal counts as 0)."""
    total = text_weight + vector_weight
    if total <= 0.0:
        return {}
    ids = set(text) | set(vector)
    return {
        i: (text_weight * text.get(i, 0.0) + vector_weight * vector.get(i, 0.0)) / total
        for i in ids
    }
