"""Maximal marginal relevance: trade a little relevance for less repetition."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt


def select_diverse(
    ranked: Sequence[tuple[int, float]],
    vectors: Mapping[int, npt.NDArray[np.float32]],
    lambda_: float,
    limit: int,
) -> list[tuple[int, float]]:
    """Re-order ``(unit_id, relevance)`` pairs by MMR and keep ``limit`` of them.

    Each step picks ``argmax lambda * rel - (1 - lambda) * max_sim_to_picked``,
    relevance scaled by the top relevance so both terms share ``[0, 1]``. Units
    without a stored vector count as dissimilar to everything.
    """
    if not ranked:
        return []
    top = max(score for _, score in ranked) or 1.0
    remaining = list(ranked)
    picked: list[tuple[int, float]] = []
    picked_vectors: list[npt.NDArray[np.float32]] = []
    while remaining and len(picked) < limit:
        best_index, best_value = 0, -np.inf
        for index, (unit_id, score) in enumerate(remaining):
            vector = vectors.get(unit_id)
            similarity = 0.0
            if vector is not None and picked_vectors:
                similarity = float(max(float(np.dot(vector, p)) for p in picked_vectors))
            value = lambda_ * (score / top) - (1.0 - lambda_) * similarity
            if value > best_value:
                best_index, best_value = index, value
        unit_id, score = remaining.pop(best_index)
        picked.append((unit_id, score))
        vector = vectors.get(unit_id)
        if vector is not None:
            picked_vectors.append(vector)
    return picked
