"""The REST API for the prompt: session kinds, prompt.toml, the ritual, the context report,
and scope=all search syncing the other agents first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.http import create_app
from memdir.memory import Memory
from memdir.tools import TOOLS

TOKEN = "p" * 32


@pytest.fixture
def api(home: Path) -> Iterator[TestClient]:
    Memory.open(home, embedder=HashEmbedder()).init()
    opener = lambda agent: Memory.open(  # noqa: E731
        home, agent, embedder=HashEmbedder(), overrides={"search": {"cross_agent": "true"}}
    )
    app = create_app(home, open_memory=opener, token=TOKEN)
    with TestClient(
        app, base_url="http://127.0.0.1", headers={"Authorization": f"Bearer {TOKEN}"}
    ) as client:
        yield client


def test_session_kind_and_context_fields(api: TestClient, home: Path) -> None:
    assert api.put("/api/v1/files/MEMORY.md", json={"content": "- PIN hint: cat\n"}).is_success
    private = api.get("/api/v1/prompt").json()["prompt"]
    group = api.get("/api/v1/prompt", params={"session_kind": "group"}).json()["prompt"]
    assert "PIN hint" in private
    assert "PIN hint" not in group
    report = api.get("/api/v1/context", params={"session_kind": "group"}).json()
    assert report["session_kind"] == "group"
    assert report["workspace"] == str(home / "workspace")
    assert report["tools"] == len(TOOLS)  # every tool the tool table defines
    assert report["skills"] == 1  # the example skill `memdir init` writes
    memory_row = next(f for f in report["files"] if f["name"] == "MEMORY.md")
    assert memory_row["status"] == "EXCLUDED"
    bad = api.get("/api/v1/context", params={"session_kind": "public"})
    assert bad.status_code == 422


def test_prompt_files_over_rest(api: TestClient) -> None:
    answer = api.put("/api/v1/prompt/files/MEMORY.md", json={"enabled": False})
    assert answer.status_code == 200
    assert answer.json() == {
        "path": "MEMORY.md", "enabled": False, "sort_order": 60, "origin": "global",
    }  # fmt: skip
    files = api.get("/api/v1/prompt/files").json()["files"]
    assert next(f for f in files if f["path"] == "MEMORY.md")["enabled"] is False
    empty = api.put("/api/v1/prompt/files/MEMORY.md", json={})
    assert empty.status_code == 422
    assert "enabled and/or sort_order" in empty.json()["detail"]
    outside = api.put("/api/v1/prompt/files/..%2Fx.md", json={"enabled": True})
    assert outside.status_code in (400, 404)


def test_the_ritual_over_rest(api: TestClient, home: Path) -> None:
    assert api.get("/api/v1/ritual").json() == {"active": True}
    assert "## BOOTSTRAP.md" in api.get("/api/v1/prompt").json()["prompt"]
    assert api.post("/api/v1/ritual/finish").json() == {"finished": True}
    assert not (home / "workspace" / "BOOTSTRAP.md").exists()
    assert api.post("/api/v1/ritual/finish").json() == {"finished": False}
    assert api.get("/api/v1/ritual", params={"agent": "coder"}).json() == {"active": False}


def test_search_all_syncs_the_other_agents_first(api: TestClient, home: Path) -> None:
    assert api.get("/api/v1/search", params={"query": "anything"}).is_success  # index exists
    with Memory.open(home, "writer", embedder=HashEmbedder()) as writer:
        writer.init()
        writer.append_daily("The novel's heroine is called Marisol Quintero.")  # not synced
    answer = api.get("/api/v1/search", params={"query": "Marisol Quintero", "scope": "all"})
    hits = answer.json()["hits"]
    assert hits
    assert hits[0]["source"] == "agent:writer"
