"""Retry timing and Retry-After parsing."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest

from memdir.errors import ConfigError
from memdir.llm import RetryPolicy
from memdir.llm.transport import parse_retry_after, scrub


def test_backoff_grows_with_jitter_and_cap() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_delay=5.0, jitter=0.25)
    for retry, base in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (10, 5.0)]:
        delays = {policy.delay(retry) for _ in range(50)}
        assert all(base * 0.75 <= d <= base for d in delays)
        assert len(delays) > 1


def test_retry_after_replaces_backoff_but_is_capped() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_delay=5.0)
    assert policy.delay(0, retry_after=3.0) == 3.0
    assert policy.delay(0, retry_after=60.0) == 5.0
    assert policy.delay(0, retry_after=-1.0) == 0.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"Retry-After": "2"}, 2.0),
        ({"Retry-After": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),
        ({"Retry-After": "soon"}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(httpx.Headers(headers)) == expected


def test_parse_retry_after_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    seconds = parse_retry_after(httpx.Headers({"Retry-After": when}))
    assert seconds is not None
    assert 25 <= seconds <= 31


@pytest.mark.parametrize("options", [{"max_retries": -1}, {"initial_delay": -1.0}, {"jitter": 1.5}])
def test_bad_policies(options: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        RetryPolicy(**options)  # type: ignore[arg-type]


def test_scrub() -> None:
    assert scrub("key sk-1 and sk-1 again", ["sk-1", ""]) == "key *** and *** again"
