"""Bodies that are not JSON, over a live server: the problem says so and what to send."""

from __future__ import annotations

import httpx
import pytest

JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"{", "not valid JSON (Expecting property name enclosed in double quotes at character 1)"),
        (b'{"content": "x"*}', "not valid JSON (Expecting ',' delimiter at character 15)"),
        (b'{"content": "\xff\xfe"}', "could not be read as JSON (UTF-8, not nested too deep)"),
        (b'{"content":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "not nested too deep"),
    ],
)  # fmt: skip
def test_a_body_that_is_not_json_names_the_fix(api: httpx.Client, body: bytes, said: str) -> None:
    answer = api.post("/api/v1/facts", content=body, headers=JSON)
    assert answer.status_code in (400, 422), answer.text
    detail = answer.json()["detail"]
    assert said in detail, detail
    assert "send a JSON object with the route's fields (see /openapi.json)" in detail
    assert "body field" not in detail
    assert api.get("/api/v1/facts").is_success  # the server goes on
