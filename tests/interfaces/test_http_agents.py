"""``POST /api/v1/agents`` through an HTTP client against the app: the admin creates an
agent's workspace as ``memdir --agent ID init`` does; hostile or taken ids and agent tokens
are refused with an answer naming the fix, and nothing is written for them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memdir.access import AccessTokens
from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.http import create_app
from memdir.memory import Memory

ADMIN = "a" * 32


@pytest.fixture
def api(home: Path) -> Iterator[TestClient]:
    Memory.open(home, embedder=HashEmbedder()).init()
    opener = lambda agent: Memory.open(  # noqa: E731
        home, agent, embedder=HashEmbedder(), chat_model=None
    )
    app = create_app(home, open_memory=opener, token=ADMIN)
    with TestClient(
        app, base_url="http://127.0.0.1", headers={"Authorization": f"Bearer {ADMIN}"}
    ) as client:
        yield client


def everything_under(home: Path) -> set[str]:
    return {str(p.relative_to(home)) for p in home.rglob("*") if ".git" not in p.parts}


def test_the_admin_creates_an_agent_ready_to_use(api: TestClient, home: Path) -> None:
    made = api.post(
        "/api/v1/agents",
        json={"agent": "coder", "name": "Coder", "description": "Writes and reviews code."},
    )
    assert made.status_code == 201, made.text
    assert made.json()["agent"] == "coder"
    assert {"SOUL.md", "MEMORY.md", "TOOLS.md"} <= set(made.json()["created"])
    soul = (home / "agents" / "coder" / "SOUL.md").read_text()
    assert "Coder" in soul
    assert "Writes and reviews code." in soul
    assert api.get("/api/v1/agents").json()["agents"] == ["coder"]
    saved = api.post("/api/v1/facts", params={"agent": "coder"}, json={"content": "Uses ruff."})
    assert saved.status_code == 201, saved.text
    assert (home / "agents" / "coder" / "memory").is_dir()

    again = api.post("/api/v1/agents", json={"agent": "coder"})
    assert again.status_code == 409, again.text
    assert "exists already" in again.json()["detail"]
    assert "?agent=coder" in again.json()["detail"]
    reserved = api.post("/api/v1/agents", json={"agent": "global"})
    assert reserved.status_code == 400, reserved.text
    assert "choose another id" in reserved.json()["detail"]


HOSTILE_IDS = ["../etc", "Coder", "a/b", "..", ".hidden", "-x", "x" * 65, "co der", "café",
               "a\x00b", "%2e%2e"]  # fmt: skip


@pytest.mark.parametrize("agent", HOSTILE_IDS)
def test_a_hostile_agent_id_is_refused_and_writes_nothing(
    api: TestClient, home: Path, agent: str
) -> None:
    before = everything_under(home)
    refused = api.post("/api/v1/agents", json={"agent": agent})
    assert refused.status_code == 400, refused.text
    assert "lower-case letters" in refused.json()["detail"]  # it names what to send
    assert everything_under(home) == before


def test_a_bad_display_name_or_empty_id_writes_nothing(api: TestClient, home: Path) -> None:
    before = everything_under(home)
    long_name = api.post("/api/v1/agents", json={"agent": "writer", "name": "n" * 150})
    assert long_name.status_code == 422, long_name.text
    assert "display name" in long_name.json()["detail"]
    assert api.post("/api/v1/agents", json={"agent": ""}).status_code == 422
    assert api.post("/api/v1/agents", json={"agent": "x", "extra": 1}).status_code == 422
    assert everything_under(home) == before


def test_an_agents_token_may_not_create_agents(api: TestClient, home: Path) -> None:
    token, _ = AccessTokens(home).create("alice", "alice's laptop")
    refused = api.post(
        "/api/v1/agents", json={"agent": "mallory"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert refused.status_code == 403, refused.text
    assert "admin token" in refused.json()["detail"]
    assert not (home / "agents" / "mallory").exists()


@pytest.mark.parametrize("name", ["Co\x00der", "Coder\u202eredoc", "\x1b[31mRed", "Co\x7fder"])
def test_a_display_name_with_hidden_characters_is_refused(
    api: TestClient, home: Path, name: str
) -> None:
    before = everything_under(home)
    refused = api.post("/api/v1/agents", json={"agent": "coder", "name": name})
    assert refused.status_code == 422, refused.text
    assert "visible text" in refused.json()["detail"]
    assert everything_under(home) == before
