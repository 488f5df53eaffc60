"""The file primitives over REST, against a live server: hash-checked writes, create-only,
insert, rename, delete and the daily-note append (the contract the memory browser uses)."""

from __future__ import annotations

import hashlib

import httpx
import pytest
from support_interfaces import LiveServer

pytestmark = pytest.mark.slow


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def conflict(response: httpx.Response) -> str:
    assert response.status_code == 409, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "conflict"
    assert body["type"] == "urn:memdir:error:conflict"
    detail: str = body["detail"]
    return detail


def test_a_stale_write_is_refused_and_names_the_read_route(api: httpx.Client) -> None:
    path = "/api/v1/files/notes/stale.md"
    assert api.put(path, json={"content": "v1\n"}).status_code == 200
    read = api.get(path).json()
    assert read["sha256"] == sha("v1\n")
    api.put(path, json={"content": "v2 from another agent\n"})
    detail = conflict(api.put(path, json={"content": "v3\n", "expected_sha256": read["sha256"]}))
    assert "changed since you read it" in detail
    assert "GET /api/v1/files/{path}" in detail
    assert api.get(path).json()["content"] == "v2 from another agent\n"
    fresh = api.get(path).json()["sha256"]
    written = api.put(path, json={"content": "v3\n", "expected_sha256": fresh}).json()
    assert written == {"path": "notes/stale.md", "chars": 3, "sha256": sha("v3\n")}


def test_a_stale_edit_and_a_stale_delete_are_refused(api: httpx.Client) -> None:
    path = "/api/v1/files/notes/edit.md"
    api.put(path, json={"content": "alpha\nbeta\n"})
    old = api.get(path).json()["sha256"]
    api.patch(path, json={"old_text": "alpha", "new_text": "ALPHA"})
    conflict(api.patch(path, json={"old_text": "beta", "new_text": "B", "expected_sha256": old}))
    conflict(api.delete(path, params={"expected_sha256": old}))
    now = api.get(path).json()
    assert now["content"] == "ALPHA\nbeta\n"
    edited = api.patch(
        path, json={"old_text": "beta", "new_text": "B", "expected_sha256": now["sha256"]}
    )
    assert edited.json()["replacements"] == 1
    latest = api.get(path).json()["sha256"]
    assert api.delete(path, params={"expected_sha256": latest}).json() == {
        "path": "notes/edit.md",
        "deleted": True,
    }
    assert api.get(path).status_code == 404


def test_create_only_refuses_an_existing_file(api: httpx.Client) -> None:
    path = "/api/v1/files/notes/once.md"
    assert api.put(path, json={"content": "first\n", "create_only": True}).status_code == 200
    detail = conflict(api.put(path, json={"content": "second\n", "create_only": True}))
    assert "already exists" in detail
    assert api.get(path).json()["content"] == "first\n"
    both = api.put(path, json={"content": "x", "create_only": True, "expected_sha256": sha("")})
    assert both.status_code == 422


def test_insert_at_a_line_and_rename_without_clobbering(api: httpx.Client) -> None:
    api.put("/api/v1/files/notes/list.md", json={"content": "one\nthree\n"})
    inserted = api.post(
        "/api/v1/files/insert", json={"path": "notes/list.md", "line": 1, "text": "two"}
    ).json()
    assert inserted == {"path": "notes/list.md", "sha256": sha("one\ntwo\nthree\n"), "lines": 3}
    api.post("/api/v1/files/insert", json={"path": "notes/list.md", "line": 0, "text": "zero"})
    assert api.get("/api/v1/files/notes/list.md").json()["content"] == "zero\none\ntwo\nthree\n"
    past = api.post("/api/v1/files/insert", json={"path": "notes/list.md", "line": 9, "text": "x"})
    assert past.status_code == 422
    assert "from 0 (before the first line) to 4" in past.json()["detail"]

    api.put("/api/v1/files/notes/taken.md", json={"content": "keep me\n"})
    taken = api.post("/api/v1/files/rename", json={"from": "notes/list.md", "to": "notes/taken.md"})
    assert "already exists" in conflict(taken)
    assert api.get("/api/v1/files/notes/taken.md").json()["content"] == "keep me\n"
    moved = api.post(
        "/api/v1/files/rename", json={"from": "notes/list.md", "to": "archive/list.md"}
    )
    assert moved.json() == {"from": "notes/list.md", "to": "archive/list.md"}
    assert api.get("/api/v1/files/notes/list.md").status_code == 404
    hits = api.get("/api/v1/search", params={"query": "zero one two three"}).json()["hits"]
    assert [hit["path"] for hit in hits if "list.md" in hit["path"]] == ["archive/list.md"]


def test_hostile_paths_and_credentials_are_refused(api: httpx.Client, server: LiveServer) -> None:
    escape = api.post("/api/v1/files/rename", json={"from": "notes/x.md", "to": "../../x.md"})
    assert escape.status_code == 400
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    refused = api.post(
        "/api/v1/files/insert",
        json={"path": "notes/taken.md", "line": 0, "text": f"aws key {key}"},
    )
    assert refused.status_code == 422
    assert key not in (server.home / "workspace" / "notes" / "taken.md").read_text()


def test_a_multi_line_entry_goes_to_todays_note_in_one_call(api: httpx.Client) -> None:
    summary = "\n".join(f"- session summary line {n}" for n in range(1, 11))
    landed = api.post("/api/v1/daily", json={"text": summary})
    assert landed.status_code == 201
    where = landed.json()
    assert where["end_line"] - where["start_line"] == 9
    part = api.get(
        "/api/v1/files/" + where["path"],
        params={"from": where["start_line"], "lines": 10},
    ).json()
    assert part["content"] == summary
