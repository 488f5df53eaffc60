"""What every embedder behind an HTTP API shares: batching, retries, checks, normalising.

A provider subclasses ``RemoteEmbedder`` and says only what differs between APIs:
where a batch goes and what it sends (``_request``), how to authenticate
(``_auth_headers``) and where the vectors are in the answer (``_rows``). The base
class batches the texts, retries 429 answers, 5xx answers and transport failures
with exponential backoff (a numeric ``Retry-After`` wins), turns every other
failure into an ``EmbeddingError`` naming the URL, checks each answer's size
against ``dimensions`` (learnt from the first answer when not given) and returns
L2-normalised float32 rows. Nothing touches the network until the first call.

``embed_documents`` and ``embed_query`` pass ``"document"`` or ``"query"`` to
``_request``, for APIs that embed the two differently (Gemini's task types,
Voyage's input types).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Self

import numpy as np

from memdir.embeddings.base import Vectors
from memdir.errors import ConfigError, EmbeddingError, InvalidInputError

if TYPE_CHECKING:  # httpx loads with the first request: the default embedder never needs it
    import httpx

logger = logging.getLogger(__name__)

InputKind = Literal["document", "query"]
DEFAULT_BATCH_SIZE = 256
_RETRY_AFTER_CAP = 60.0
_DIMENSION_PROBE = "dimension probe"


class RemoteEmbedder:
    """The shared machinery of HTTP embedders; see the module docstring.

    ``dimensions`` may be given; otherwise the first answer tells it (reading the
    attribute before any call sends one short probe request). Either way every
    answer is checked against it. ``send_dimensions`` also asks the server for that
    size, for models that can shorten their vectors.
    """

    provider = "remote"
    API_HINT = "check base_url and the provider setting"
    MAX_BATCH_SIZE: int | None = None
    DEFAULT_BASE_URL: str | None = None  # None: the caller must give base_url
    DEFAULT_MODEL: str | None = None  # None: the caller must give model

    def __init__(
        self,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        send_dimensions: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        base_url = base_url or self.DEFAULT_BASE_URL
        model = model if model is not None else self.DEFAULT_MODEL
        if base_url is None or model is None:
            raise ConfigError(
                f"the {self.provider} embedder needs base_url and model "
                "(embeddings.base_url, embeddings.model)"
            )
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"base_url={base_url!r} is not an http(s) URL; "
                "use e.g. 'http://localhost:11434/v1' for Ollama"
            )
        if not model.strip():
            raise ConfigError("model is empty; name the embedding model the server serves")
        _check_positive(dimensions=dimensions, batch_size=batch_size, timeout=timeout)
        if send_dimensions and dimensions is None:
            raise ConfigError("send_dimensions=True needs dimensions; set both or neither")
        if max_retries < 0 or backoff < 0:
            raise ConfigError(f"max_retries={max_retries!r} and backoff={backoff!r} must be >= 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.send_dimensions = send_dimensions
        self.batch_size = min(batch_size, self.MAX_BATCH_SIZE or batch_size)
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self._api_key = api_key
        self._dimensions = dimensions
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    # -- what a provider says ---------------------------------------------------------------

    def _request(self, batch: list[str], kind: InputKind) -> tuple[str, dict[str, Any]]:
        """The URL and JSON body that embed ``batch``."""
        raise NotImplementedError

    def _auth_headers(self) -> dict[str, str]:
        """Headers that carry the API key (none without a key)."""
        return {}

    def _rows(self, body: Any, count: int) -> list[Any]:
        """The ``count`` vectors (number lists) in a decoded answer, in input order."""
        raise NotImplementedError

    # -- the Embedder protocol ----------------------------------------------------------------

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self.embed_documents([_DIMENSION_PROBE])
        assert self._dimensions is not None  # set by the first answer
        return self._dimensions

    @dimensions.setter
    def dimensions(self, value: int) -> None:
        _check_positive(dimensions=value)
        self._dimensions = value

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, "document")

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self._embed([text], "query")[0]
        return vector

    def close(self) -> None:
        """Close the HTTP connection pool; a later call opens a new one."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the machinery ---------------------------------------------------------------------

    def _embed(self, texts: Sequence[str], kind: InputKind) -> Vectors:
        _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        batches = [
            self._embed_batch(list(texts[start : start + self.batch_size]), kind)
            for start in range(0, len(texts), self.batch_size)
        ]
        return np.concatenate(batches)

    def _embed_batch(self, batch: list[str], kind: InputKind) -> Vectors:
        url, payload = self._request(batch, kind)
        vectors = self._parse(url, self._post(url, payload), len(batch))
        if self._dimensions is None:
            self._dimensions = vectors.shape[1]
            logger.info("%s serves %d-dimensional vectors", url, vectors.shape[1])
        elif vectors.shape[1] != self._dimensions:
            raise EmbeddingError(
                f"the embeddings endpoint {url} returned {vectors.shape[1]}-dimensional "
                f"vectors for model {self.model!r}, expected {self._dimensions}; fix the "
                "dimensions setting (or run `memdir index rebuild` after changing models)"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors

    def _post(self, url: str, payload: dict[str, Any]) -> httpx.Response:
        """Send one request, retrying 429, 5xx and transport failures."""
        import httpx

        client = self._http_client()
        failure = ""
        for attempt in range(self.max_retries + 1):
            delay = self.backoff * 2**attempt
            try:
                response = client.post(url, json=payload)
            except httpx.TimeoutException:
                failure = f"no answer within {self.timeout} s"
            except httpx.TransportError as exc:
                failure = f"cannot connect ({exc}); is the server running?"
            else:
                if response.is_success:
                    return response
                failure = f"HTTP {response.status_code}: {_error_detail(response)}"
                if response.status_code != 429 and response.status_code < 500:
                    raise EmbeddingError(
                        f"the embeddings endpoint {url} refused the request for model "
                        f"{self.model!r} with {failure}{_hint(response.status_code)}"
                    )
                delay = _retry_after(response, delay)
            if attempt < self.max_retries:
                logger.warning(
                    "%s failed (%s); retry %d in %.2f s", url, failure, attempt + 1, delay
                )
                time.sleep(delay)
        raise EmbeddingError(
            f"the embeddings endpoint {url} failed {self.max_retries + 1} times "
            f"for model {self.model!r}; last: {failure}"
        )

    def _parse(self, url: str, response: httpx.Response, count: int) -> Vectors:
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            what = f"JSON that does not parse ({exc}): {response.text[:120]!r}"
            raise self._malformed(url, what) from exc
        try:
            rows = self._rows(body, count)
        except ValueError as exc:
            raise self._malformed(url, str(exc)) from exc
        try:
            vectors = np.array(rows, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            what = f"embeddings that are not equal-length number lists ({exc})"
            raise self._malformed(url, what) from exc
        if vectors.ndim != 2 or vectors.shape[1] == 0 or not np.isfinite(vectors).all():
            raise self._malformed(url, "empty or non-finite embeddings")
        return vectors

    def _malformed(self, url: str, what: str) -> EmbeddingError:
        return EmbeddingError(f"the embeddings endpoint {url} returned {what}; {self.API_HINT}")

    def _http_client(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._client is None:
                headers = {"User-Agent": "memdir"}
                if self._api_key:
                    headers.update(self._auth_headers())
                self._client = httpx.Client(headers=headers, timeout=self.timeout)
            return self._client


def _retry_after(response: httpx.Response, default: float) -> float:
    value = response.headers.get("Retry-After", "")
    try:
        return min(max(float(value), 0.0), _RETRY_AFTER_CAP)
    except ValueError:
        return default


def _error_detail(response: httpx.Response) -> str:
    """The server's own error message when it sent one, else the start of the body."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return repr(response.text[:200])
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return repr(error["message"])
    if isinstance(error, str):
        return repr(error)
    detail = body.get("detail") if isinstance(body, dict) else None  # Voyage's errors
    if isinstance(detail, str):
        return repr(detail)
    return repr(response.text[:200])


def _hint(status: int) -> str:
    if status in (401, 403):
        return "; check the API key"
    if status == 404:
        return "; check base_url and that the server has this model"
    return ""


def _check_positive(**values: float | None) -> None:
    for name, value in values.items():
        if value is not None and value <= 0:
            raise ConfigError(f"{name}={value!r} must be positive")


def _check_texts(texts: Sequence[str]) -> None:
    if isinstance(texts, str) or not all(isinstance(text, str) for text in texts):
        raise InvalidInputError(
            f"embed_documents takes a list of str; got {type(texts).__name__} {str(texts)[:60]!r}"
        )


def vector_rows(body: Any, count: int, items: str = "data", field: str = "embedding") -> list[Any]:
    """The ``count`` vectors of an answer ``{items: [{field: [...]}, ...]}``, in input order.

    OpenAI and Voyage answer ``data[i].embedding`` (sorted by ``index`` when every item
    has one), Gemini ``embeddings[i].values``. A ``ValueError`` says what is off.
    """
    found = body.get(items) if isinstance(body, dict) else None
    if not isinstance(found, list) or len(found) != count:
        what = f"{len(found)} items" if isinstance(found, list) else f"no {items!r} list"
        raise ValueError(f"{what} for {count} inputs")
    if not all(isinstance(item, dict) and field in item for item in found):
        raise ValueError(f"an item of {items!r} without {field!r}")
    if all(isinstance(item.get("index"), int) for item in found):
        found = sorted(found, key=lambda item: item["index"])
    return [item[field] for item in found]
