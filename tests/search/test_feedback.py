"""Pseudo-relevance feedback moves a query only as far as its best blocks agree
(``memdir.search.feedback``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.search.feedback import coherence
from memdir.search.hybrid import expand_query
from memdir.store import SqliteStore

Index = Callable[..., SqliteStore]


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_coherence_is_the_mean_mutual_cosine_clipped() -> None:
    same = unit(1, 2, 3)
    assert coherence([same, same, same]) == pytest.approx(1.0)
    assert coherence([unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)]) == pytest.approx(0.0)
    # pairs at 60 degrees: cosine 0.5; an unnormalised vector counts by direction
    a, b = unit(1, 0), unit(0.5, np.sqrt(3) / 2)
    assert coherence([a, 3 * b]) == pytest.approx(0.5, abs=1e-6)
    assert coherence([unit(1, 0), unit(-1, 0)]) == 0.0  # opposed: no agreement, not negative
    assert coherence([unit(1, 0), np.zeros(2, dtype=np.float32)]) == 0.0
    assert coherence([unit(1, 1)]) == 1.0  # one block cannot disagree with itself
    assert coherence([]) == 1.0


def moved(store: SqliteStore, embedder: HashEmbedder, ids: list[int], coherent: bool) -> float:
    """The cosine between the query and the query after feedback towards ``ids``."""
    query = embedder.embed_query("what happened to the orders dashboard")
    expanded = expand_query(store, query, dict.fromkeys(ids, 1.0), 0.6, coherent=coherent)
    return float(query @ expanded)


def block_ids(store: SqliteStore, embedder: HashEmbedder, texts: list[str]) -> list[int]:
    found = store.vector_search(embedder.embed_query("x"), ["global"], "block", 100)
    units = store.get_units([item.unit_id for item in found])
    return [i for t in texts for i, u in units.items() if u.text == t][: len(texts)]


def test_disagreeing_best_blocks_barely_move_the_query(
    make_index: Index, embedder: HashEmbedder
) -> None:
    lines = [
        "- Deploys happen on Tuesdays.",
        "- Dara adopted a cat named Miso.",
        "- Lunch at noon.",
    ]
    store = make_index({"memory/2024-01-02.md": "# Day\n\n" + "\n".join(lines) + "\n"})
    ids = block_ids(store, embedder, lines)
    assert len(ids) == 3
    vectors = list(store.get_vectors(ids).values())
    assert coherence(vectors) < 0.3  # three topics
    assert moved(store, embedder, ids, coherent=True) > moved(store, embedder, ids, coherent=False)
    assert moved(store, embedder, ids, coherent=True) > 0.95


def test_agreeing_best_blocks_move_the_query_as_plain_feedback_does(
    make_index: Index, embedder: HashEmbedder
) -> None:
    line = "- Alice migrated the billing service to postgres."
    store = make_index({f"memory/2024-01-0{d}.md": f"# Day {d}\n\n{line}\n" for d in (1, 2, 3)})
    found = store.vector_search(embedder.embed_query(line), ["global"], "block", 10)
    ids = [item.unit_id for item in found][:3]
    assert len(ids) == 3
    coherent, plain = (moved(store, embedder, ids, coherent=c) for c in (True, False))
    assert coherent == pytest.approx(plain, abs=1e-6)
    assert plain < 0.99  # and the query did move
