"""``/api/v1/sessions``: a host hands memdir its conversation, then asks for extraction or
the session-end note (what integrations/openclaw does after each OpenClaw turn)."""

from __future__ import annotations

import json

import httpx
import pytest
from support_interfaces import LiveServer
from test_http_api import assert_problem

pytestmark = pytest.mark.slow

TURN_1 = [
    {"id": "m1", "role": "user", "content": "I prefer green tea in the afternoon."},
    {"id": "m2", "role": "assistant", "content": "Noted."},
]
TURN_2 = [
    {"id": "m3", "role": "user", "content": "My favourite editor is Helix."},
    {"id": "m4", "role": "assistant", "content": "Got it."},
]


def transcript(server: LiveServer, agent: str, session: str) -> list[dict[str, object]]:
    path = server.home / "sessions" / agent / f"{session}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_resent_conversation_is_appended_once(server: LiveServer, api: httpx.Client) -> None:
    url = "/api/v1/sessions/host-1/messages"
    first = api.post(url, params={"agent": "claw"}, json={"messages": TURN_1})
    assert first.json() == {"session_id": "host-1", "appended": 2, "skipped": 0}
    second = api.post(url, params={"agent": "claw"}, json={"messages": TURN_1 + TURN_2})
    assert second.json() == {"session_id": "host-1", "appended": 2, "skipped": 2}
    lines = transcript(server, "claw", "host-1")
    assert [(m["id"], m["content"]) for m in lines] == [
        (m["id"], m["content"]) for m in TURN_1 + TURN_2
    ]
    extracted = api.post("/api/v1/memory/claw/summarize/host-1").json()
    assert (extracted["ran"], extracted["facts_saved"]) == (True, 2), extracted
    facts = [f["text"] for f in api.get("/api/v1/facts", params={"agent": "claw"}).json()["facts"]]
    assert "The user prefers green tea in the afternoon" in facts


def test_messages_without_ids_are_all_appended(server: LiveServer, api: httpx.Client) -> None:
    body = {"messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": "ok"}]}
    for _ in range(2):
        assert api.post("/api/v1/sessions/host-2/messages", json=body).json()["appended"] == 2
    assert len(transcript(server, "global", "host-2")) == 4


def test_session_end_writes_the_conversation_as_a_note(api: httpx.Client) -> None:
    api.post(
        "/api/v1/sessions/host-3/messages", params={"agent": "claw"}, json={"messages": TURN_2}
    )
    ended = api.post("/api/v1/sessions/host-3/end", params={"agent": "claw"}).json()
    path = ended["note"]["path"]
    assert path.startswith("memory/")
    assert ended["note"]["message_count"] == 2
    note = api.get(f"/api/v1/files/{path}", params={"agent": "claw"}).json()["content"]
    assert "My favourite editor is Helix." in note
    assert "host-3" in note


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/v1/sessions/bad.id/messages", {"messages": TURN_1}),
        ("/api/v1/sessions/host-4/messages", {"messages": [{"role": "system", "content": "x"}]}),
        ("/api/v1/sessions/host-4/messages", {"messages": []}),
        (
            "/api/v1/sessions/host-4/messages",
            {"messages": [{"id": "../x", "role": "user", "content": "x"}]},
        ),
    ],
    ids=["session-id", "role", "empty", "message-id"],
)
def test_bad_input_is_refused_and_nothing_is_written(
    server: LiveServer, api: httpx.Client, url: str, body: dict[str, object]
) -> None:
    assert_problem(api.post(url, json=body), 422)
    assert not (server.home / "sessions" / "global" / "host-4.jsonl").exists()


def test_ending_an_unknown_session_names_the_fix(api: httpx.Client) -> None:
    body = assert_problem(api.post("/api/v1/sessions/never-seen/end"), 404)
    assert "append a message" in str(body["detail"])
