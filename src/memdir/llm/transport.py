"""HTTP plumbing shared by the remote providers: timeouts, retries, error mapping.

``JsonEndpoint`` posts a JSON payload and returns the decoded JSON answer. It
retries connection errors, timeouts, 408/409/429 and 5xx answers with
exponential backoff and jitter (honouring ``Retry-After``), and maps failures to
``ChatModelError``; a context-length answer becomes ``ContextLengthError`` and is
never retried. Secrets (the api key) are scrubbed from every message it raises
or logs, and headers are never logged.

The readers at the end (``error_field``, ``read_usage``, ``normalise_finish_reason``)
decode the parts of an answer that the providers lay out alike.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from memdir.errors import ChatModelError, ConfigError, ContextLengthError
from memdir.llm.base import Usage

logger = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a failed request.

    The n-th retry waits ``initial_delay * 2**n`` seconds, capped at
    ``max_delay`` and shortened by up to ``jitter`` (a fraction) at random. A
    ``Retry-After`` answer header replaces the computed wait (also capped).
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.25

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, got {self.max_retries!r}")
        if self.initial_delay < 0 or self.max_delay < 0:
            raise ConfigError(
                f"retry delays must not be negative, got initial_delay={self.initial_delay!r} "
                f"and max_delay={self.max_delay!r}"
            )
        if not 0 <= self.jitter <= 1:
            raise ConfigError(f"jitter must be between 0 and 1, got {self.jitter!r}")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        base = min(self.initial_delay * (2.0**retry), self.max_delay)
        return base * (1.0 - self.jitter * random.random())


@dataclass(frozen=True)
class ErrorReply:
    """What a provider read from an error answer: its message, and whether the
    request was too long for the model's context window."""

    message: str
    context_length: bool = False


ErrorReader = Callable[[httpx.Response], ErrorReply]


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def validate_base_url(base_url: str) -> str:
    """Return ``base_url`` without a trailing slash, or raise ConfigError."""
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"base_url {base_url!r} is not an http(s) URL; "
            "use e.g. 'http://localhost:11434/v1' for Ollama"
        )
    return base_url.rstrip("/")


def scrub(text: str, secrets: Sequence[str]) -> str:
    """Replace every secret in ``text`` with ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


class JsonEndpoint:
    """One JSON-over-HTTP endpoint with retries; the client opens on first use."""

    def __init__(
        self,
        url: str,
        *,
        provider: str,
        headers: Mapping[str, str],
        timeout: float,
        policy: RetryPolicy,
        read_error: ErrorReader,
        api_key_setting: str,
        secrets: Sequence[str] = (),
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.url = url
        self.provider = provider
        self.timeout = timeout
        self.policy = policy
        self._headers = dict(headers)
        self._read_error = read_error
        self._api_key_setting = api_key_setting
        self._secrets = tuple(s for s in secrets if s)
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        url_parts = httpx.URL(url)
        self.label = f"{provider} endpoint {url_parts.scheme}://{url_parts.netloc.decode()}"

    def post(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``payload``; return the decoded JSON object of a 2xx answer."""
        client = self._open()
        attempts = self.policy.max_retries + 1
        last: ChatModelError | None = None
        retry_after: float | None = None
        for attempt in range(attempts):
            if attempt:
                wait = self.policy.delay(attempt - 1, retry_after)
                logger.warning(
                    "%s failed (%s); retry %d of %d in %.2fs",
                    self.label,
                    last,
                    attempt,
                    self.policy.max_retries,
                    wait,
                )
                time.sleep(wait)
            try:
                retry_after = None
                response = client.post(self.url, json=payload, headers=self._headers)
            except httpx.TimeoutException as exc:
                last = ChatModelError(
                    f"{self.label} did not answer within {self.timeout}s ({type(exc).__name__}); "
                    "raise the timeout option or check that the server is up"
                )
                continue
            except httpx.TransportError as exc:
                last = ChatModelError(
                    f"could not reach {self.label}: {self._scrub(str(exc)) or type(exc).__name__}; "
                    "check base_url and that the server is running"
                )
                continue
            if response.is_success:
                return self._decode(response)
            last = self._error_for(response)
            retry_after = parse_retry_after(response.headers)
            if not _is_retryable(response.status_code) or isinstance(last, ContextLengthError):
                raise last
        assert last is not None
        raise ChatModelError(
            f"{self.label} still failing after {attempts} attempts: {last}"
        ) from last

    def close(self) -> None:
        """Close the HTTP client if it was opened."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _open(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout), transport=self._transport
                )
            return self._client

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    def _decode(self, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            excerpt = self._scrub(response.text[:200])
            raise ChatModelError(
                f"{self.label} answered HTTP {response.status_code} with a body that is not "
                f"a JSON object: {excerpt!r}; check that base_url points at the API root"
            )
        return data

    def _error_for(self, response: httpx.Response) -> ChatModelError:
        status = response.status_code
        reply = self._read_error(response)
        detail = self._scrub(reply.message)
        if reply.context_length:
            return ContextLengthError(
                f"{self.label} rejected the request as too long for the model's context "
                f"window (HTTP {status}): {detail}; shorten or compact the conversation"
            )
        if status in (401, 403):
            return ChatModelError(
                f"{self.label} refused the credentials (HTTP {status}): {detail}; "
                f"check the api key setting {self._api_key_setting!r}"
            )
        if status == 404:
            return ChatModelError(
                f"{self.label} answered HTTP 404 for {self.url}: {detail}; "
                "check base_url and the model name"
            )
        return ChatModelError(f"{self.label} answered HTTP {status}: {detail}")


def _is_retryable(status: int) -> bool:
    return status in RETRYABLE_STATUSES or status >= 500


def error_field(response: httpx.Response) -> object:
    """The ``error`` member of a JSON error body (a dict or a string), or None."""
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("error") if isinstance(body, dict) else None


def read_usage(raw: object, input_key: str, output_key: str) -> Usage | None:
    """Token counts from a provider's ``usage`` object, or None when they are missing."""
    if not isinstance(raw, dict):
        return None
    read, written = raw.get(input_key), raw.get(output_key)
    if not isinstance(read, int) or not isinstance(written, int):
        return None
    return Usage(input_tokens=read, output_tokens=written)


def normalise_finish_reason(reason: object, names: Mapping[str, str]) -> str | None:
    """The provider's stop reason in our vocabulary (unknown ones pass through as sent)."""
    return names.get(reason, reason) if isinstance(reason, str) else None


def error_excerpt(response: httpx.Response, limit: int = 500) -> str:
    """The start of an error body, for answers that are not in the provider's format."""
    text = response.text.strip()
    return text[:limit] if text else response.reason_phrase or "(empty body)"
