"""The Gemini and Voyage AI embedders against a real HTTP server speaking each API, and
through Memory and the CLI: configuration, the index's identity check and the cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from embed_server import Canned, EmbeddingsServer, vector_for
from typer.testing import CliRunner

from memdir.embeddings import GeminiEmbedder, VoyageEmbedder, create_embedder
from memdir.errors import ConfigError, EmbeddingError, IndexMismatchError
from memdir.interfaces.cli import app
from memdir.memory import Memory

TEXTS = ["my cat", "a dog", "x"]


def unit(vector: list[float]) -> np.ndarray:
    array = np.array(vector, dtype=np.float32)
    return array / np.linalg.norm(array)


def gemini(endpoint: EmbeddingsServer, **options: object) -> GeminiEmbedder:
    return GeminiEmbedder(base_url=endpoint.root_url + "/v1beta", api_key="g-key", **options)  # type: ignore[arg-type]


def test_gemini_sends_task_types_and_reads_values(endpoint: EmbeddingsServer) -> None:
    with gemini(endpoint, model="models/gemini-embedding-001") as embedder:
        assert (embedder.provider, embedder.model) == ("gemini", "models/gemini-embedding-001")
        vectors = embedder.embed_documents(TEXTS)
        query = embedder.embed_query("my cat")
    np.testing.assert_allclose(vectors, np.stack([unit(vector_for(t)) for t in TEXTS]), atol=1e-6)
    np.testing.assert_allclose(query, unit(vector_for("my cat")), atol=1e-6)
    documents, asked = endpoint.received
    assert documents.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert documents.headers["x-goog-api-key"] == "g-key"
    assert "authorization" not in documents.headers
    assert documents.body["requests"][0] == {
        "model": "models/gemini-embedding-001",
        "taskType": "RETRIEVAL_DOCUMENT",
        "content": {"parts": [{"text": "my cat"}]},
    }
    assert asked.body["requests"][0]["taskType"] == "RETRIEVAL_QUERY"


def test_gemini_batches_at_most_100_and_asks_for_a_size(endpoint: EmbeddingsServer) -> None:
    with gemini(endpoint, batch_size=500, dimensions=4, send_dimensions=True) as embedder:
        assert embedder.dimensions == 4
        embedder.embed_documents([f"text {n}" for n in range(150)])
    assert [len(r.body["requests"]) for r in endpoint.received] == [100, 50]
    assert endpoint.received[0].body["requests"][0]["outputDimensionality"] == 4


def test_gemini_errors_name_the_url_and_the_servers_message(endpoint: EmbeddingsServer) -> None:
    endpoint.queue(Canned(status=400, body={"error": {"code": 400, "message": "API key not valid",
                                                      "status": "INVALID_ARGUMENT"}}))  # fmt: skip
    with gemini(endpoint) as embedder, pytest.raises(EmbeddingError) as caught:
        embedder.embed_query("hello")
    assert "API key not valid" in str(caught.value)
    assert ":batchEmbedContents" in str(caught.value)
    endpoint.queue(Canned(body={"embeddings": [{"value": [1, 2]}]}))
    with (
        gemini(endpoint) as embedder,
        pytest.raises(EmbeddingError, match="an item of 'embeddings' without 'values'"),
    ):
        embedder.embed_query("hello")


def test_voyage_sends_input_types_and_a_bearer_key(endpoint: EmbeddingsServer) -> None:
    options = {"base_url": endpoint.base_url, "api_key": "v-key", "dimensions": 4,
               "send_dimensions": True}  # fmt: skip
    with VoyageEmbedder(**options) as embedder:  # type: ignore[arg-type]
        assert (embedder.provider, embedder.model) == ("voyage", "voyage-3.5")
        vectors = embedder.embed_documents(TEXTS)
        embedder.embed_query("my cat")
    np.testing.assert_allclose(vectors, np.stack([unit(vector_for(t)) for t in TEXTS]), atol=1e-6)
    documents, asked = endpoint.received
    assert documents.path == "/v1/embeddings"
    assert documents.headers["authorization"] == "Bearer v-key"
    assert documents.body == {"input": TEXTS, "model": "voyage-3.5", "input_type": "document",
                              "output_dimension": 4}  # fmt: skip
    assert asked.body["input_type"] == "query"
    endpoint.queue(Canned(status=401, body={"detail": "Provided API key is invalid."}))
    with (
        VoyageEmbedder(base_url=endpoint.base_url) as embedder,
        pytest.raises(EmbeddingError, match="check the API key") as caught,
    ):
        embedder.embed_query("hello")
    assert "Provided API key is invalid." in str(caught.value)


def test_the_registry_builds_both(endpoint: EmbeddingsServer) -> None:
    built = create_embedder("voyage", base_url=endpoint.base_url, model="voyage-3-lite")
    assert isinstance(built, VoyageEmbedder)
    with pytest.raises(ConfigError, match="does not accept options"):
        create_embedder("gemini", colour="blue")


def cli(home: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--home", str(home), *args])
    return result.exit_code, result.stdout + result.stderr


def test_memory_indexes_with_gemini_checks_identity_and_reuses_the_cache(
    home: Path, endpoint: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "g-key")
    gemini_flags = ["--set", "embeddings.provider=gemini",
                    "--set", f"embeddings.base_url={endpoint.root_url}/v1beta"]  # fmt: skip
    assert cli(home, *gemini_flags, "init")[0] == 0
    notes = home / "workspace" / "memory" / "2025-01-31.md"
    notes.write_text("# 2025-01-31\n\n- The cat sleeps on the piano.\n- Taxes are due in May.\n")
    code, out = cli(home, *gemini_flags, "index", "sync")
    assert code == 0, out
    sent = len(endpoint.received)
    assert sent >= 1
    assert endpoint.received[0].headers["x-goog-api-key"] == "g-key"
    code, out = cli(home, *gemini_flags, "index", "status", "--json")
    status = json.loads(out)
    assert (status["identity"]["provider"], status["identity"]["model"]) == (
        "gemini", "gemini-embedding-001",
    )  # fmt: skip
    assert cli(home, *gemini_flags, "index", "rebuild")[0] == 0
    resent = [
        request["content"]["parts"][0]["text"]
        for received in endpoint.received[sent:]
        for request in received.body["requests"]
    ]
    assert resent == ["dimension probe"]  # a new process learns the size; no text re-embedded
    code, out = cli(home, *gemini_flags, "search", "cat piano", "--no-sync")
    assert code == 0, out
    assert "The cat sleeps on the piano." in out
    assert endpoint.received[-1].body["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    voyage_flags = ["--set", "embeddings.provider=voyage",
                    "--set", f"embeddings.base_url={endpoint.base_url}"]  # fmt: skip
    code, out = cli(home, *voyage_flags, "search", "cat piano")  # the sync checks identity
    assert code == 1
    assert "memdir index rebuild" in out
    voyage = {"embeddings": {"provider": "voyage", "base_url": endpoint.base_url}}
    with Memory.open(home, overrides=voyage) as memory, pytest.raises(IndexMismatchError):
        memory.sync()


def test_a_public_endpoint_without_a_key_is_a_config_error(home: Path) -> None:
    code, out = cli(home, "--set", "embeddings.provider=voyage", "search", "x")
    assert code == 1
    assert "needs an API key: set the VOYAGE_API_KEY environment variable" in out
