"""Fact categories: keyword cues, seed sentences, centroids.

The built-in categories are ``preference``, ``decision``, ``fact`` and
``context``; any name matching ``[a-z][a-z0-9_-]{0,31}`` may be given
explicitly. Automatic assignment:

1. keyword cues (``prefer``, ``decided``, ``working on`` ...): the category
   with the most cue hits wins;
2. otherwise, with an embedder, the nearest category centroid (mean of a few
   seed sentences) when its cosine is at least ``CENTROID_MIN`` and beats the
   runner-up by ``CENTROID_MARGIN``;
3. otherwise ``fact``.

A query is matched to categories the same way (cues first, then centroids), but
may match several or none; recall uses that as its first tier.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence

import numpy as np

from memdir.embeddings.base import Embedder, Vectors
from memdir.errors import InvalidInputError
from memdir.facts.markers import CATEGORY_NAME

DEFAULT_CATEGORY = "fact"
CENTROID_MIN = 0.35
CENTROID_MARGIN = 0.04

CUES: Mapping[str, tuple[str, ...]] = {
    "preference": (
        "prefer",
        "prefers",
        "preferred",
        "like",
        "likes",
        "love",
        "loves",
        "hate",
        "hates",
        "dislike",
        "dislikes",
        "favorite",
        "favourite",
        "enjoy",
        "enjoys",
        "rather",
        "fan of",
    ),
    "decision": (
        "decided",
        "decide",
        "decision",
        "chose",
        "choose",
        "chosen",
        "agreed",
        "settled on",
        "going with",
        "opted",
        "we will use",
        "we'll use",
        "will use",
    ),
    "context": (
        "working on",
        "currently",
        "this week",
        "today",
        "deadline",
        "meeting",
        "sprint",
        "in progress",
        "next step",
        "project",
    ),
}

SEEDS: Mapping[str, tuple[str, ...]] = {
    "preference": (
        "I prefer tea over coffee.",
        "My favourite programming language is Python.",
        "I like dark mode in every editor.",
        "She hates early morning meetings.",
        "He enjoys hiking on weekends.",
    ),
    "decision": (
        "We decided to use PostgreSQL for the backend.",
        "The team chose React for the frontend.",
        "We agreed to release every two weeks.",
        "I decided to move the launch to March.",
        "We will use tabs, not spaces.",
    ),
    "fact": (
        "My cat is called Luna.",
        "Berlin is the capital of Germany.",
        "My sister lives in Toronto.",
        "The office is on the third floor.",
        "I was born in 1990.",
    ),
    "context": (
        "I am currently working on the billing service.",
        "This week we are migrating the database.",
        "The deadline for the report is Friday.",
        "Today I am debugging a flaky test.",
        "The current sprint focuses on onboarding.",
    ),
}

_centroids: dict[tuple[str, str, int], tuple[tuple[str, ...], Vectors]] = {}
_centroid_lock = threading.Lock()


def check_category(category: str) -> str:
    if not isinstance(category, str) or not CATEGORY_NAME.fullmatch(category):
        raise InvalidInputError(
            f"category {category!r} is not a valid name; use lower-case letters, digits, '_' "
            "or '-' (up to 32), e.g. one of preference, decision, fact, context"
        )
    return category


def _cue_counts(text: str) -> dict[str, int]:
    lowered = " " + re.sub(r"[^\w']+", " ", text.lower()) + " "
    counts = {name: sum(f" {cue} " in lowered for cue in cues) for name, cues in CUES.items()}
    return {name: n for name, n in counts.items() if n}


def category_centroids(embedder: Embedder) -> tuple[tuple[str, ...], Vectors]:
    """The names and unit centroids of the seeded categories (cached per embedder)."""
    key = (embedder.provider, embedder.model, embedder.dimensions)
    with _centroid_lock:
        cached = _centroids.get(key)
    if cached is not None:
        return cached
    names = tuple(SEEDS)
    rows = [embedder.embed_documents(list(SEEDS[name])).mean(axis=0) for name in names]
    matrix = np.vstack(rows).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    with _centroid_lock:
        _centroids[key] = (names, matrix)
    return names, matrix


def _centroid_ranking(vector: Vectors, embedder: Embedder) -> list[tuple[str, float]]:
    names, matrix = category_centroids(embedder)
    scores = matrix @ np.asarray(vector, dtype=np.float32)
    return sorted(zip(names, (float(s) for s in scores), strict=True), key=lambda x: -x[1])


def classify_fact(text: str, embedder: Embedder | None, vector: Vectors | None = None) -> str:
    """The automatic category of a fact text (see the module docstring)."""
    counts = _cue_counts(text)
    if counts:
        return max(sorted(counts), key=lambda name: counts[name])
    if embedder is not None:
        ranking = _centroid_ranking(
            vector if vector is not None else embedder.embed_query(text), embedder
        )
        (best, top), (_, second) = ranking[0], ranking[1]
        if top >= CENTROID_MIN and top - second >= CENTROID_MARGIN:
            return best
    return DEFAULT_CATEGORY


def match_query_categories(
    query: str, embedder: Embedder | None, vector: Vectors | None, known: Sequence[str]
) -> tuple[str, ...]:
    """Categories a recall query is about: cue hits, else centroids close to the best one.

    Only categories in ``known`` (those that hold facts) are returned; none
    means "no idea", and recall searches all facts.
    """
    counts = _cue_counts(query)
    if counts:
        return tuple(sorted(name for name in counts if name in known))
    if embedder is None or vector is None:
        return ()
    ranking = _centroid_ranking(vector, embedder)
    top = ranking[0][1]
    if top < CENTROID_MIN or top - ranking[1][1] < CENTROID_MARGIN:
        return ()
    return tuple(sorted(n for n, s in ranking if s >= top - CENTROID_MARGIN and n in known))
