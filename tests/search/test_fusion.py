from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.search.fusion import (
    fuse_reciprocal_rank,
    fuse_relative,
    fuse_weighted,
    normalise_bm25,
    normalise_cosine,
    scale_to_best,
)
from memdir.store import ScoredId


def ranked(*ids: int) -> list[ScoredId]:
    return [ScoredId(i, 1.0) for i in ids]


def test_rrf_first_everywhere_scores_one() -> None:
    fused = fuse_reciprocal_rank([ranked(1, 2), ranked(1, 3)], k=60)
    assert fused[1] == pytest.approx(1.0)


def test_rrf_values() -> None:
    fused = fuse_reciprocal_rank([ranked(1, 2), ranked(2, 3)], k=10)
    best = 2 / 11
    assert fused[1] == pytest.approx((1 / 11) / best)
    assert fused[2] == pytest.approx((1 / 12 + 1 / 11) / best)
    assert fused[3] == pytest.approx((1 / 12) / best)
    assert fused[2] > fused[1] > fused[3]


def test_rrf_of_nothing() -> None:
    assert fuse_reciprocal_rank([]) == {}


def test_weighted_fusion() -> None:
    fused = fuse_weighted({1: 0.5}, {1: 1.0, 2: 0.4}, text_weight=0.3, vector_weight=0.7)
    assert fused[1] == pytest.approx(0.3 * 0.5 + 0.7 * 1.0)
    assert fused[2] == pytest.approx(0.7 * 0.4)


def test_scale_to_best() -> None:
    assert scale_to_best({1: 8.0, 2: 2.0, 3: 0.0}) == {1: 1.0, 2: 0.25, 3: 0.0}
    # cosines between the cut-off (0.4) and the best (0.8)
    scaled = scale_to_best({1: 0.8, 2: 0.6, 3: 0.41}, floor=0.4)
    assert scaled[1] == pytest.approx(1.0)
    assert scaled[2] == pytest.approx(0.5)
    assert scaled[3] == pytest.approx(0.025)
    assert scale_to_best({}) == {}
    assert scale_to_best({1: 0.0, 2: 0.0}) == {1: 1.0, 2: 1.0}  # nothing to tell apart


def test_relative_fusion_keeps_margins() -> None:
    text = scale_to_best({1: 9.0, 2: 3.0})
    vector = scale_to_best({2: 0.9, 3: 0.6}, floor=0.45)
    fused = fuse_relative(text, vector, text_weight=0.65, vector_weight=0.35)
    assert fused[1] == pytest.approx(0.65)
    assert fused[2] == pytest.approx(0.65 / 3 + 0.35)
    assert fused[3] == pytest.approx(0.35 / 3)
    # rank fusion would call 1 and 2 nearly equal whatever the margins
    assert fused[1] > fused[2] > fused[3]


def test_relative_fusion_of_one_signal_ranks_its_best_first() -> None:
    # keyword-only search, or no vector list: the present signal counts alone
    assert fuse_relative({1: 1.0, 2: 0.5}, {}, text_weight=0.65, vector_weight=0.35) == {
        1: pytest.approx(1.0),
        2: pytest.approx(0.5),
    }
    # a zero weight on the only signal present still ranks
    assert fuse_relative({}, {7: 1.0}, text_weight=1.0, vector_weight=0.0) == {7: 1.0}
    assert fuse_relative({}, {}, text_weight=0.5, vector_weight=0.5) == {}


@given(st.floats(min_value=-1e6, max_value=1e12, allow_nan=False))
def test_bm25_normalised_in_unit_interval(raw: float) -> None:
    value = normalise_bm25(raw)
    assert 0.0 <= value <= 1.0


@given(
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
)
def test_bm25_normalisation_is_monotone(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert normalise_bm25(low) <= normalise_bm25(high)


def test_bm25_known_values() -> None:
    assert normalise_bm25(0.0) == 0.0
    assert normalise_bm25(1.0) == 0.5
    assert normalise_bm25(-3.0) == 0.0
    assert math.isclose(normalise_bm25(9.0), 0.9)


def test_cosine_clipped() -> None:
    assert normalise_cosine(-0.3) == 0.0
    assert normalise_cosine(0.42) == pytest.approx(0.42)
    assert normalise_cosine(1.0000001) == 1.0
