"""The REST API against a live server process (uvicorn on a free port)."""

from __future__ import annotations

import hashlib

import httpx
import pytest
from support_interfaces import LiveServer, needs_facts

pytestmark = pytest.mark.slow
PROBLEM_KEYS = {"type", "title", "status", "detail"}


def assert_problem(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, object] = response.json()
    assert set(body) >= PROBLEM_KEYS
    assert body["status"] == status
    assert isinstance(body["detail"], str)
    assert body["detail"]
    return body


def test_health_needs_no_token(server: LiveServer) -> None:
    response = httpx.get(server.url + "/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_openapi_needs_no_token_and_lists_the_routes(server: LiveServer) -> None:
    spec = httpx.get(server.url + "/openapi.json").json()
    paths = set(spec["paths"])
    for route in ("/api/v1/search", "/api/v1/files/{path}", "/api/v1/facts", "/api/v1/prompt",
                  "/api/v1/facts/recall", "/api/v1/facts/{fact_id}", "/api/v1/context",
                  "/api/v1/index/status", "/api/v1/index/sync", "/health"):  # fmt: skip
        assert route in paths


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong-token"}, {"Authorization": "Basic abc"}],
    ids=["missing", "wrong", "not-bearer"],
)
def test_every_other_route_needs_the_token(server: LiveServer, headers: dict[str, str]) -> None:
    for method, path in [("GET", "/api/v1/files"), ("GET", "/api/v1/prompt"),
                         ("PUT", "/api/v1/files/x.md"), ("POST", "/mcp")]:  # fmt: skip
        response = httpx.request(method, server.url + path, headers=headers, json={"content": "x"})
        body = assert_problem(response, 401)
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "api-token" in str(body["detail"])
    assert not (server.home / "workspace" / "x.md").exists()


def test_token_file_is_private(server: LiveServer) -> None:
    path = server.home / "api-token"
    assert path.stat().st_mode & 0o777 == 0o600
    assert len(server.token) >= 32


def test_search_finds_a_daily_note_written_through_the_api(api: httpx.Client) -> None:
    note = "# 2024-05-02\n\n- Decided to shard the orders table by region.\n"
    assert api.put("/api/v1/files/memory/2024-05-02.md", json={"content": note}).status_code == 200
    response = api.get("/api/v1/search", params={"query": "shard orders region"})
    assert response.status_code == 200
    hits = response.json()["hits"]
    assert hits[0]["citation"] == "memory/2024-05-02.md:3-3"
    assert "shard the orders table" in hits[0]["text"]
    assert hits[0]["score"] > 0
    assert isinstance(hits[0]["breakdown"], dict)


def test_files_write_read_slice_edit_and_list(api: httpx.Client) -> None:
    path = "/api/v1/files/notes/plan.md"
    sha = hashlib.sha256(b"a\nb\nc\n").hexdigest()
    assert api.put(path, json={"content": "a\nb\nc\n"}).json() == {
        "path": "notes/plan.md",
        "chars": 6,
        "sha256": sha,
    }
    assert api.get(path).json() == {"path": "notes/plan.md", "content": "a\nb\nc\n", "sha256": sha}
    part = api.get(path, params={"from": 2, "lines": 1}).json()
    assert part["start_line"] == 2
    assert part["end_line"] == 2
    assert part["content"] == "b"
    edited = api.patch(path, json={"old_text": "b", "new_text": "B"})
    assert edited.json() == {"path": "notes/plan.md", "replacements": 1}
    assert api.get(path).json()["content"] == "a\nB\nc\n"
    assert "notes/plan.md" in api.get("/api/v1/files", params={"prefix": "notes/"}).json()["files"]


@pytest.mark.parametrize(
    "path",
    ["..%2F..%2Fescape.md", "notes%2F..%2F..%2F..%2Fescape.md", "%2Ftmp%2Fescape.md",
     "notes/evil.txt", "notes/nul%00.md"],
)  # fmt: skip
def test_path_traversal_is_rejected_and_writes_nothing(
    server: LiveServer, api: httpx.Client, path: str
) -> None:
    before = sorted(
        p for p in server.home.parent.rglob("*") if "escape" in p.name or "evil" in p.name
    )
    response = api.put(f"/api/v1/files/{path}", json={"content": "pwned"})
    body = assert_problem(response, 400)
    assert body["type"] == "urn:memdir:error:invalid-path"
    after = sorted(
        p for p in server.home.parent.rglob("*") if "escape" in p.name or "evil" in p.name
    )
    assert after == before == []


def test_missing_file_is_404_problem(api: httpx.Client) -> None:
    body = assert_problem(api.get("/api/v1/files/nothing-here.md"), 404)
    assert body["type"] == "urn:memdir:error:not-found"
    assert body["instance"] == "/api/v1/files/nothing-here.md"


def test_failed_edit_is_409_problem(api: httpx.Client) -> None:
    api.put("/api/v1/files/edit.md", json={"content": "x x"})
    body = assert_problem(
        api.patch("/api/v1/files/edit.md", json={"old_text": "x", "new_text": "y"}), 409
    )
    assert "occurs 2 times" in str(body["detail"])
    assert api.get("/api/v1/files/edit.md").json()["content"] == "x x"


def test_bad_parameters_are_422_problem(api: httpx.Client) -> None:
    body = assert_problem(api.get("/api/v1/search", params={"query": "x", "max_results": 0}), 422)
    assert "max_results" in str(body["detail"])
    assert_problem(api.put("/api/v1/files/x.md", json={"content": "x", "extra": 1}), 422)


def test_invalid_agent_is_400_problem(api: httpx.Client) -> None:
    body = assert_problem(api.get("/api/v1/files", params={"agent": "../Bad"}), 400)
    assert body["type"] == "urn:memdir:error:invalid-agent-id"


def test_agent_parameter_scopes_the_workspace(server: LiveServer, api: httpx.Client) -> None:
    api.put("/api/v1/files/MEMORY.md", params={"agent": "coder"}, json={"content": "coder\n"})
    assert (server.home / "agents" / "coder" / "MEMORY.md").read_text() == "coder\n"
    coder = api.get("/api/v1/files/MEMORY.md", params={"agent": "coder"}).json()["content"]
    assert coder == "coder\n"


def test_oversized_body_is_413(api: httpx.Client) -> None:
    response = api.put("/api/v1/files/big.md", json={"content": "x" * (9 * 1024 * 1024)})
    assert_problem(response, 413)


def test_prompt_context_and_index_routes(api: httpx.Client) -> None:
    assert "persistent memory" in api.get("/api/v1/prompt").json()["prompt"]
    context = api.get("/api/v1/context")
    assert context.status_code == 200
    assert api.post("/api/v1/index/sync").status_code == 200
    status = api.get("/api/v1/index/status").json()
    assert status["files"] >= 1


def test_curation_routes(api: httpx.Client) -> None:
    missing = api.post("/api/v1/memory/coder/summarize/conv-1")
    body = assert_problem(missing, 404)
    assert "memdir session list" in str(body["detail"])
    dry = api.post("/api/v1/memory/global/emergence", params={"dry_run": "true"})
    assert dry.status_code == 200
    assert dry.json()["written"] is False
    assert dry.json()["proposals"] == []  # curate.review is off


def test_unknown_route_is_404_problem(api: httpx.Client) -> None:
    assert_problem(api.get("/api/v1/nope"), 404)


def test_tools_route_runs_a_tool_and_lists_schemas(api: httpx.Client) -> None:
    names = [t["function"]["name"] for t in api.get("/api/v1/tools").json()]
    assert names[0] == "memory_search"
    anthropic = api.get("/api/v1/tools", params={"format": "anthropic"}).json()
    assert "input_schema" in anthropic[0]
    result = api.post("/api/v1/tools/memory_list_files", json={"prefix": "notes/"})
    assert result.status_code == 200
    assert result.json()["tool"] == "memory_list_files"
    body = assert_problem(api.post("/api/v1/tools/memory_search", json={}), 422)
    assert "query" in str(body["detail"])


@needs_facts
def test_facts_save_recall_and_forget(api: httpx.Client) -> None:
    saved = api.post("/api/v1/facts", json={"content": "The staging DB is on port 5433."})
    assert saved.status_code == 201, saved.text
    recalled = api.get("/api/v1/facts/recall", params={"query": "staging port"}).json()["facts"]
    assert "5433" in str(recalled)
    fact_id = recalled[0].get("id") or recalled[0]["fact"]["id"]
    forgotten = api.delete(f"/api/v1/facts/{fact_id}", params={"reason": "moved to 5434"})
    assert forgotten.status_code == 200, forgotten.text
    assert_problem(api.delete(f"/api/v1/facts/{fact_id}"), 422)  # the reason is required


def test_recent_activity_lists_new_files_and_facts(api: httpx.Client) -> None:
    api.put("/api/v1/files/memory/2030-01-01.md", json={"content": "- recent note\n"})
    saved = api.post("/api/v1/facts", json={"content": "The office plant is a fern."}).json()
    body = api.get("/api/v1/recent", params={"days": 1, "limit": 100}).json()
    assert "memory/2030-01-01.md" in [change["path"] for change in body["files"]]
    facts = [(change["kind"], change["fact"]["id"]) for change in body["facts"]]
    assert ("saved", saved["fact"]["id"]) in facts
    stamps = [change["modified"] for change in body["files"]]
    assert stamps == sorted(stamps, reverse=True)
    assert_problem(api.get("/api/v1/recent", params={"days": 0}), 422)
