"""The mem0-compatible surface (/api/mem0) against a live server, with mem0's request shapes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from support_interfaces import LiveServer
from test_http_api import assert_problem

from memdir.access import AccessTokens

pytestmark = pytest.mark.slow
BASE = "/api/mem0"


def add(api: httpx.Client, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = api.post(f"{BASE}/memories", json=body)
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def test_add_search_get_update_history_delete_with_stable_ids(
    server: LiveServer, api: httpx.Client
) -> None:
    user = {"user_id": "mem0-alice"}
    added = add(api, {**user, "messages": [
        {"role": "user", "content": "Hi! My name is Alice. I love hiking in the Alps."},
        {"role": "assistant", "content": "Nice to meet you, Alice!"},
    ]})  # fmt: skip
    assert {row["event"] for row in added} == {"ADD"}
    assert any("Alice" in row["memory"] for row in added)
    said = [{"role": "user", "content": "The ski pass costs 60 euros"}]
    raw = add(api, {**user, "infer": False, "run_id": "trip-1", "messages": said})
    assert [row["memory"] for row in raw] == ["The ski pass costs 60 euros"]
    memory_id = raw[0]["id"]
    transcript = server.home / "sessions" / "mem0-alice" / "trip-1.jsonl"
    assert "60 euros" in transcript.read_text()

    found = api.post(f"{BASE}/search", json={"query": "ski pass price", **user, "limit": 3})
    assert found.status_code == 200
    hits = found.json()["results"]
    assert hits[0]["id"] == memory_id
    assert isinstance(hits[0]["score"], float)

    got = api.get(f"{BASE}/memories/{memory_id}", params=user).json()
    assert (got["id"], got["memory"], got["user_id"]) == (memory_id, raw[0]["memory"], "mem0-alice")
    updated = api.put(f"{BASE}/memories/{memory_id}", json={"text": "The ski pass costs 65 euros"})
    assert updated.status_code == 200, updated.text
    assert updated.json()["id"] == memory_id
    again = api.put(f"{BASE}/memories/{memory_id}", json={"data": "The ski pass costs 70 euros"})
    assert again.status_code == 200, again.text
    got = api.get(f"{BASE}/memories/{memory_id}").json()  # no scope: the admin finds it
    assert (got["id"], got["memory"]) == (memory_id, "The ski pass costs 70 euros")
    assert got["updated_at"] is not None
    listed = api.get(f"{BASE}/memories", params=user).json()["results"]
    assert [m["id"] for m in listed].count(memory_id) == 1

    assert api.delete(f"{BASE}/memories/{memory_id}", params=user).status_code == 200
    assert_problem(api.get(f"{BASE}/memories/{memory_id}", params=user), 404)
    history = api.get(f"{BASE}/memories/{memory_id}/history", params=user).json()
    assert [row["event"] for row in history] == ["ADD", "UPDATE", "UPDATE", "DELETE"]
    assert [row["memory_id"] for row in history] == [memory_id] * 4
    assert history[1]["old_memory"] == "The ski pass costs 60 euros"
    assert history[2]["new_memory"] == "The ski pass costs 70 euros"
    assert history[3]["is_deleted"] == 1
    notes = "".join(p.read_text() for p in (server.home / "agents" / "mem0-alice").rglob("*.md"))
    assert "60 euros" in notes  # nothing is deleted from the Markdown


def test_scopes_are_workspaces_and_a_token_is_held_to_its_own(
    server: LiveServer, api: httpx.Client
) -> None:
    add(api, {"agent_id": "mem0-bob", "infer": False,
              "messages": [{"role": "user", "content": "Bob parks on level 3"}]})  # fmt: skip
    said = [{"role": "user", "content": "Carol parks on level 7"}]
    carol = add(api, {"user_id": "mem0-carol", "infer": False, "messages": said})
    bob_hits = api.post(f"{BASE}/search", json={"query": "parks level", "agent_id": "mem0-bob"})
    assert [h["memory"] for h in bob_hits.json()["results"]] == ["Bob parks on level 3"]
    by_filter = api.post(
        f"{BASE}/search", json={"query": "parks level", "filters": {"user_id": "mem0-carol"}}
    )
    assert [h["memory"] for h in by_filter.json()["results"]] == ["Carol parks on level 7"]
    token, _ = AccessTokens(server.home).create("mem0-bob")
    with server.client(token) as bob:
        own = bob.get(f"{BASE}/memories").json()["results"]
        assert [m["memory"] for m in own] == ["Bob parks on level 3"]
        assert_problem(bob.get(f"{BASE}/memories", params={"user_id": "mem0-carol"}), 403)
        body = assert_problem(bob.get(f"{BASE}/memories/{carol[0]['id']}"), 404)
        assert "Carol" not in str(body)
        assert_problem(bob.put(f"{BASE}/memories/{carol[0]['id']}", json={"text": "mine"}), 404)


def test_bad_requests_name_the_fix(api: httpx.Client) -> None:
    body = assert_problem(
        api.post(f"{BASE}/memories", json={"messages": [{"role": "user", "content": "x"}]}), 422
    )
    assert "user_id, agent_id or run_id" in str(body["detail"])
    assert_problem(api.get(f"{BASE}/memories", params={"user_id": "Not An Id!"}), 400)
    assert_problem(api.get(f"{BASE}/memories/f-zzzzzzzzzz", params={"user_id": "nobody"}), 404)
    body = assert_problem(api.delete(f"{BASE}/memories"), 422)
    assert "user_id" in str(body["detail"])
