"""The history of another workspace's file, asked for through the tools over REST: the
error says what the history shows, not what a write does."""

from __future__ import annotations

import httpx
import pytest


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("memory_history", {"path": "agent:bob:memory/plan.md"}),
        ("memory_diff", {"version": "0123456", "path": "agent:bob:memory/plan.md"}),
    ],
)
def test_another_workspaces_history_is_refused_in_reading_terms(
    api: httpx.Client, tool: str, arguments: dict[str, str]
) -> None:
    answer = api.post(f"/api/v1/tools/{tool}", json=arguments)
    assert answer.status_code == 400, answer.text
    detail = answer.json()["detail"]
    assert "sees the history of its own workspace only" in detail, detail
    assert "pass 'memory/plan.md' (without the prefix)" in detail
    assert "writes only its own" not in detail
