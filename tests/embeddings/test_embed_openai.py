"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from embed_server import Canned, EmbeddingsServer, vector_for

from memdir.embeddings import Embedder, OpenAIEmbedder
from memdir.errors import ConfigError, EmbeddingError, InvalidInputError

TEXTS = ["my cat", "a dog", "the quarterly budget", "x", "a fifth text"]


def unit(vector: list[float]) -> np.ndarray:
    array = np.array(vector, dtype=np.float32)
    return array / np.linalg.norm(array)


@pytest.fixture
def client(endpoint: EmbeddingsServer) -> Iterator[OpenAIEmbedder]:
    with OpenAIEmbedder(
        base_url=endpoint.base_url, model="nomic-embed-text", max_retries=2, backoff=0.01
    ) as embedder:
        yield embedder


def test_posts_model_and_inputs_and_returns_unit_rows(
    endpoint: EmbeddingsServer, client: OpenAIEmbedder
) -> None:
    vectors = client.embed_documents(TEXTS)
    assert vectors.dtype == np.float32
    assert vectors.shape == (len(TEXTS), 4)
    np.testing.assert_allclose(vectors, np.stack([unit(vector_for(t)) for t in TEXTS]), atol=1e-6)
    (request,) = endpoint.received
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "nomic-embed-text", "input": TEXTS}
    assert "authorization" not in request.headers


def test_identity_and_query(client: OpenAIEmbedder) -> None:
    assert isinstance(client, Embedder)
    assert (client.provider, client.model) == ("openai", "nomic-embed-text")
    query = client.embed_query("my cat")
    assert query.shape == (4,)
    np.testing.assert_allclose(query, unit(vector_for("my cat")), atol=1e-6)


def test_sends_the_api_key_as_a_bearer_token(endpoint: EmbeddingsServer) -> None:
    with OpenAIEmbedder(base_url=endpoint.base_url + "/", model="m", api_key="sk-test") as emb:
        emb.embed_query("hello")
    assert endpoint.received[0].headers["authorization"] == "Bearer sk-test"
    assert endpoint.received[0].path == "/v1/embeddings"  # the trailing slash is dropped


def test_dimensions_come_from_the_first_answer(
    endpoint: EmbeddingsServer, client: OpenAIEmbedder
) -> None:
    assert client.dimensions == 4  # one probe request
    assert len(endpoint.received) == 1
    assert client.dimensions == 4
    assert client.embed_documents([]).shape == (0, 4)
    assert len(endpoint.received) == 1


def test_given_dimensions_need_no_request_and_are_checked(endpoint: EmbeddingsServer) -> None:
    with OpenAIEmbedder(base_url=endpoint.base_url, model="m", dimensions=8) as embedder:
        assert embedder.dimensions == 8
        assert embedder.embed_documents([]).shape == (0, 8)
        assert endpoint.received == []
        with pytest.raises(EmbeddingError, match="returned 4-dimensional vectors") as caught:
            embedder.embed_query("hello")
    assert endpoint.base_url in str(caught.value)


def test_send_dimensions_asks_the_server_for_a_size(endpoint: EmbeddingsServer) -> None:
    with OpenAIEmbedder(
        base_url=endpoint.base_url, model="m", dimensions=4, send_dimensions=True
    ) as embedder:
        embedder.embed_query("hello")
    assert endpoint.received[0].body["dimensions"] == 4


def test_large_inputs_go_in_batches_in_order(endpoint: EmbeddingsServer) -> None:
    with OpenAIEmbedder(base_url=endpoint.base_url, model="m", batch_size=2) as embedder:
        vectors = embedder.embed_documents(TEXTS)
    assert [request.body["input"] for request in endpoint.received] == [
        TEXTS[0:2],
        TEXTS[2:4],
        TEXTS[4:5],
    ]
    np.testing.assert_allclose(vectors, np.stack([unit(vector_for(t)) for t in TEXTS]), atol=1e-6)


def test_items_are_put_back_in_index_order(
    endpoint: EmbeddingsServer, client: OpenAIEmbedder
) -> None:
    data = [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [3.0, 4.0]}]
    endpoint.queue(Canned(body={"data": data}))
    vectors = client.embed_documents(["first", "second"])
    np.testing.assert_allclose(vectors, [[0.6, 0.8], [0.0, 1.0]], atol=1e-6)


def test_server_errors_are_retried(endpoint: EmbeddingsServer, client: OpenAIEmbedder) -> None:
    endpoint.queue(Canned(status=500, body=b"oops"), Canned(status=503, body=b"busy"))
    vectors = client.embed_documents(["my cat"])
    np.testing.assert_allclose(vectors[0], unit(vector_for("my cat")), atol=1e-6)
    assert len(endpoint.received) == 3


def test_rate_limits_are_retried_after_the_servers_delay(
    endpoint: EmbeddingsServer, client: OpenAIEmbedder
) -> None:
    endpoint.queue(Canned(status=429, body={"error": "slow down"}, headers={"Retry-After": "0"}))
    assert client.embed_query("x").shape == (4,)
    assert len(endpoint.received) == 2


def test_a_persistent_500_is_an_error_naming_the_url(
    endpoint: EmbeddingsServer, client: OpenAIEmbedder
) -> None:
    failure = Canned(status=500, body={"error": {"message": "model crashed"}})
    endpoint.queue(failure, failure, failure, failure)
    with pytest.raises(EmbeddingError) as caught:
        client.embed_query("hello")
    message = str(caught.value)
    assert f"{endpoint.base_url}/embeddings" in message
    assert "failed 3 times" in message
    assert "HTTP 500" in message
    assert "model crashed" in message
    assert len(endpoint.received) == 3  # one try and max_retries=2 retries


@pytest.mark.parametrize(
    ("status", "hint"), [(400, "refused"), (401, "API key"), (404, "check base_url")]
)
def test_client_errors_are_not_retried(
    endpoint: EmbeddingsServer, client: OpenAIEmbedder, status: int, hint: str
) -> None:
    endpoint.queue(Canned(status=status, body={"error": {"message": "nope"}}))
    with pytest.raises(EmbeddingError, match=hint) as caught:
        client.embed_query("hello")
    assert f"HTTP {status}: 'nope'" in str(caught.value)
    assert endpoint.base_url in str(caught.value)
    assert len(endpoint.received) == 1


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b"{not json", "JSON that does not parse"),
        (b"[1, 2]", "no 'data' list"),
        (b'{"data": []}', "0 items for 1 inputs"),
        (b'{"data": [{"index": 0}]}', "without 'embedding'"),
        (b'{"data": [{"embedding": ["a", "b"]}]}', "not equal-length number lists"),
        (b'{"data": [{"embedding": []}]}', "empty or non-finite"),
    ],
)
def test_malformed_answers_are_clear_errors(
    endpoint: EmbeddingsServer, client: OpenAIEmbedder, body: bytes, what: str
) -> None:
    endpoint.queue(Canned(body=body))
    with pytest.raises(EmbeddingError, match=what) as caught:
        client.embed_query("hello")
    assert endpoint.base_url in str(caught.value)


def test_a_slow_server_times_out(endpoint: EmbeddingsServer) -> None:
    endpoint.queue(Canned(delay=1.0, body={"data": []}))
    with (
        OpenAIEmbedder(base_url=endpoint.base_url, model="m", timeout=0.2, max_retries=0) as emb,
        pytest.raises(EmbeddingError, match=r"no answer within 0.2 s"),
    ):
        emb.embed_query("hello")


def test_a_closed_port_is_an_error_naming_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    with (
        OpenAIEmbedder(base_url=base_url, model="m", max_retries=1, backoff=0.01) as embedder,
        pytest.raises(EmbeddingError, match="cannot connect") as caught,
    ):
        embedder.embed_query("hello")
    assert base_url in str(caught.value)
    assert "failed 2 times" in str(caught.value)


def test_threads_share_one_client(endpoint: EmbeddingsServer, client: OpenAIEmbedder) -> None:
    results: list[np.ndarray] = []

    def work() -> None:
        results.append(client.embed_documents(TEXTS))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    for vectors in results:
        np.testing.assert_allclose(vectors, results[0])
    assert len(endpoint.received) == 4


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"base_url": "localhost:11434/v1", "model": "m"}, "not an http"),
        ({"base_url": "http://h/v1", "model": " "}, "model is empty"),
        ({"base_url": "http://h/v1", "model": "m", "dimensions": 0}, "dimensions=0"),
        ({"base_url": "http://h/v1", "model": "m", "batch_size": 0}, "batch_size=0"),
        ({"base_url": "http://h/v1", "model": "m", "timeout": 0}, "timeout=0"),
        ({"base_url": "http://h/v1", "model": "m", "max_retries": -1}, "max_retries=-1"),
        ({"base_url": "http://h/v1", "model": "m", "send_dimensions": True}, "needs dimensions"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        OpenAIEmbedder(**options)  # type: ignore[arg-type]


def test_texts_must_be_a_list_of_strings(client: OpenAIEmbedder) -> None:
    with pytest.raises(InvalidInputError, match="list of str"):
        client.embed_documents("hello")
    with pytest.raises(InvalidInputError, match="list of str"):
        client.embed_documents(["ok", None])  # type: ignore[list-item]
