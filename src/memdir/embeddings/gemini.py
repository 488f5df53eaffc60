"""Embeddings from Google's Gemini API (``batchEmbedContents``), without Google's SDK.

``POST {base_url}/models/{model}:batchEmbedContents`` with one request per text::

    {"requests": [{"model": "models/gemini-embedding-001",
                   "content": {"parts": [{"text": "..."}]},
                   "taskType": "RETRIEVAL_DOCUMENT",      # RETRIEVAL_QUERY for a query
                   "outputDimensionality": 768}]}        # only with send_dimensions

The answer's ``embeddings[i].values`` are the vectors, in request order. The key goes
in the ``x-goog-api-key`` header. The API takes at most 100 texts per call, so larger
batches are cut to 100.
"""

from __future__ import annotations

from typing import Any

from memdir.embeddings.remote import InputKind, RemoteEmbedder, vector_rows

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
DEFAULT_MODEL = "gemini-embedding-001"
TASK_TYPES = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}


class GeminiEmbedder(RemoteEmbedder):
    """An embedder behind the Gemini API (``provider = "gemini"``)."""

    provider = "gemini"
    API_HINT = (
        "check that base_url points at the Gemini API (default "
        f"{DEFAULT_BASE_URL}) and that the model is an embedding model"
    )
    MAX_BATCH_SIZE = 100
    DEFAULT_BASE_URL = DEFAULT_BASE_URL
    DEFAULT_MODEL = DEFAULT_MODEL

    @property
    def url(self) -> str:
        return f"{self.base_url}/models/{self._name}:batchEmbedContents"

    @property
    def _name(self) -> str:
        return self.model.removeprefix("models/")

    def _request(self, batch: list[str], kind: InputKind) -> tuple[str, dict[str, Any]]:
        common: dict[str, Any] = {"model": f"models/{self._name}", "taskType": TASK_TYPES[kind]}
        if self.send_dimensions:
            common["outputDimensionality"] = self._dimensions
        requests = [{**common, "content": {"parts": [{"text": text}]}} for text in batch]
        return self.url, {"requests": requests}

    def _auth_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": str(self._api_key)}

    def _rows(self, body: Any, count: int) -> list[Any]:
        return vector_rows(body, count, items="embeddings", field="values")
