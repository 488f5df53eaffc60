"""Embeddings from Voyage AI's API, without Voyage's SDK.

``POST {base_url}/embeddings`` with ``{"input": [...], "model": ..., "input_type":
"document" | "query"}`` (and ``"output_dimension"`` with send_dimensions); the answer's
``data[i].embedding`` lists are the vectors. The key is a bearer token. Voyage embeds a
query and a document differently, so ``embed_query`` asks for ``input_type: query``.
"""

from __future__ import annotations

from typing import Any

from memdir.embeddings.remote import InputKind, RemoteEmbedder, vector_rows

DEFAULT_BASE_URL = "https://api.voyageai.com/v1"
DEFAULT_MODEL = "voyage-3.5"


class VoyageEmbedder(RemoteEmbedder):
    """An embedder behind the Voyage AI API (``provider = "voyage"``)."""

    provider = "voyage"
    API_HINT = f"check that base_url points at the Voyage API (default {DEFAULT_BASE_URL})"
    MAX_BATCH_SIZE = 1000
    DEFAULT_BASE_URL = DEFAULT_BASE_URL
    DEFAULT_MODEL = DEFAULT_MODEL

    @property
    def url(self) -> str:
        return f"{self.base_url}/embeddings"

    def _request(self, batch: list[str], kind: InputKind) -> tuple[str, dict[str, Any]]:
        payload: dict[str, Any] = {"input": batch, "model": self.model, "input_type": kind}
        if self.send_dimensions:
            payload["output_dimension"] = self._dimensions
        return self.url, payload

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"}

    def _rows(self, body: Any, count: int) -> list[Any]:
        return vector_rows(body, count)
