"""Embeddings from any OpenAI-compatible HTTP endpoint: OpenAI, Ollama, LM Studio, vLLM.

``POST {base_url}/embeddings`` with ``{"model": ..., "input": [...]}``; the answer's
``data[i].embedding`` lists become L2-normalised float32 rows. Batching, retries and
checks are ``RemoteEmbedder``'s. The API key is a parameter: the caller reads it from
the environment or config.
"""

from __future__ import annotations

from typing import Any

from memdir.embeddings.remote import DEFAULT_BATCH_SIZE, InputKind, RemoteEmbedder, vector_rows

__all__ = ["DEFAULT_BATCH_SIZE", "OpenAIEmbedder"]


class OpenAIEmbedder(RemoteEmbedder):
    """An embedder behind an OpenAI-compatible ``/embeddings`` endpoint.

    ``send_dimensions`` asks the server for ``dimensions`` (OpenAI's text-embedding-3
    models can shorten their vectors).
    """

    provider = "openai"
    API_HINT = "check that base_url points at an OpenAI-compatible API (it usually ends in '/v1')"

    @property
    def url(self) -> str:
        return f"{self.base_url}/embeddings"

    def _request(self, batch: list[str], kind: InputKind) -> tuple[str, dict[str, Any]]:
        payload: dict[str, Any] = {"model": self.model, "input": batch}
        if self.send_dimensions:
            payload["dimensions"] = self._dimensions
        return self.url, payload

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"}

    def _rows(self, body: Any, count: int) -> list[Any]:
        return vector_rows(body, count)
