"""``GET /api/v1/trace`` through an HTTP client against the app: newest first, filtered,
scoped by the token like every route, honest when tracing is off or the file is torn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memdir.access import AccessTokens
from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.http import create_app
from memdir.memory import Memory

ADMIN = "t" * 32
TRACED = {"trace": {"enabled": "true"}}


def _api(home: Path, overrides: dict[str, dict[str, str]]) -> Iterator[TestClient]:
    Memory.open(home, embedder=HashEmbedder()).init()
    opener = lambda agent: Memory.open(  # noqa: E731
        home, agent, embedder=HashEmbedder(), chat_model=None, overrides=overrides
    )
    app = create_app(home, open_memory=opener, token=ADMIN)
    with TestClient(app, base_url="http://127.0.0.1", headers=bearer(ADMIN)) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def api(home: Path) -> Iterator[TestClient]:
    yield from _api(home, TRACED)


def test_the_trace_is_newest_first_filtered_and_scoped_by_the_token(
    api: TestClient, home: Path
) -> None:
    admin = api
    alice_token, alice = AccessTokens(home).create("alice", "alice's laptop")
    as_alice = bearer(alice_token)
    assert admin.post("/api/v1/facts", json={"content": "The deploy runs on Fridays."}).is_success
    assert admin.get("/api/v1/search", params={"query": "deploy Fridays"}).is_success
    assert admin.get("/api/v1/facts/recall", params={"query": "when is the deploy"}).is_success
    miso = {"content": "Alice's cat is Miso."}
    assert api.post("/api/v1/facts", json=miso, headers=as_alice).is_success
    assert api.get("/api/v1/search", params={"query": "cat name"}, headers=as_alice).is_success

    mine = admin.get("/api/v1/trace").json()
    assert mine["enabled"] is True
    assert mine["skipped"] == 0
    assert "note" not in mine
    assert [(e["kind"], e["query"]) for e in mine["entries"]] == [
        ("recall", "when is the deploy"),
        ("search", "deploy Fridays"),
    ]
    search = mine["entries"][1]
    assert search["tool"] == "GET /api/v1/search"
    assert search["hits"][0]["cited"].startswith("memory/")
    assert set(search["hits"][0]["breakdown"]) >= {"bm25", "vector"}
    assert "Fridays" in search["hits"][0]["text"]
    assert admin.get("/api/v1/trace", params={"kind": "search"}).json()["entries"] == [search]
    assert len(admin.get("/api/v1/trace", params={"limit": 1}).json()["entries"]) == 1

    hers = api.get("/api/v1/trace", headers=as_alice).json()["entries"]
    assert [(e["query"], e["token"]) for e in hers] == [("cat name", alice.id)]
    assert hers[0]["hits"]  # her own note
    assert "deploy" not in str(hers)  # never the global workspace's
    assert admin.get("/api/v1/trace", params={"agent": "alice"}).json()["entries"] == hers
    other = api.get("/api/v1/trace", params={"agent": "bob"}, headers=as_alice)
    assert other.status_code == 403, other.text
    wrong = admin.get("/api/v1/trace", params={"kind": "save"})
    assert wrong.status_code == 422
    assert "kind" in wrong.text


def test_a_torn_or_hand_edited_line_is_skipped_and_counted(api: TestClient, home: Path) -> None:
    admin = api
    assert admin.get("/api/v1/search", params={"query": "first"}).is_success
    path = next((home / "index").glob("trace-*.jsonl"))
    with path.open("a", encoding="utf-8") as file:
        file.write('{"kind": "search", "query": "tor\n[1, 2]\n\xff not json\n')
    assert admin.get("/api/v1/search", params={"query": "second"}).is_success
    read = admin.get("/api/v1/trace").json()
    assert read["skipped"] == 3
    assert [e["query"] for e in read["entries"]] == ["second", "first"]


def test_when_tracing_is_off_the_answer_says_how_to_turn_it_on(home: Path) -> None:
    for admin in _api(home, {}):
        assert admin.get("/api/v1/search", params={"query": "anything"}).is_success
        read = admin.get("/api/v1/trace").json()
        assert read["enabled"] is False
        assert read["entries"] == []
        assert "trace.enabled = true" in read["note"]
