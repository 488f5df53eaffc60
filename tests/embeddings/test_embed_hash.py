"""The hash embedder, the deterministic test double other layers' tests rely on."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.embeddings import Embedder, HashEmbedder


def test_it_satisfies_the_contract() -> None:
    embedder = HashEmbedder(dimensions=32)
    assert isinstance(embedder, Embedder)
    assert (embedder.provider, embedder.model, embedder.dimensions) == ("hash", "hash-32", 32)


@given(texts=st.lists(st.text(max_size=60), max_size=8))
def test_rows_are_unit_or_zero_float32(texts: list[str]) -> None:
    vectors = HashEmbedder(dimensions=16).embed_documents(texts)
    assert vectors.shape == (len(texts), 16)
    assert vectors.dtype == np.float32
    for text, norm in zip(texts, np.linalg.norm(vectors, axis=1), strict=True):
        # Zero only without words (or when words cancel out in one bucket).
        assert norm == pytest.approx(1.0, abs=1e-5) or norm == 0.0
        if not re.search(r"\w", text):
            assert norm == 0.0


@given(word=st.from_regex(r"[A-Za-z0-9_]+", fullmatch=True))
def test_a_single_word_gives_a_signed_one_hot_row(word: str) -> None:
    row = HashEmbedder(dimensions=16).embed_query(word)
    assert sorted(np.abs(row).tolist()) == [0.0] * 15 + [1.0]


@given(text=st.text(max_size=60))
def test_the_same_text_always_gives_the_same_vector(text: str) -> None:
    first = HashEmbedder().embed_query(text)
    np.testing.assert_array_equal(first, HashEmbedder().embed_query(text))
    np.testing.assert_array_equal(first, HashEmbedder().embed_documents(["x", text])[1])


def test_shared_words_score_above_unrelated_text() -> None:
    embedder = HashEmbedder(dimensions=256)
    query = embedder.embed_query("Whiskerino the cat")
    related, unrelated = embedder.embed_documents(
        ["my cat is called Whiskerino", "quarterly budget meeting moved"]
    )
    assert float(related @ query) > float(unrelated @ query)
    assert float(related @ query) > 0.3


def test_case_does_not_matter() -> None:
    embedder = HashEmbedder()
    np.testing.assert_array_equal(embedder.embed_query("Cat"), embedder.embed_query("cAT"))


def test_empty_input_list() -> None:
    assert HashEmbedder(dimensions=8).embed_documents([]).shape == (0, 8)


def test_too_few_dimensions_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        HashEmbedder(dimensions=1)
