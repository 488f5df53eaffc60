"""Shared files have an owner: an agent's own token does not change USER.md, it proposes.

Over a live server, alice's token writes (REST PUT, MCP ``memory_write_file``) and edits
(REST PATCH, MCP ``memory_edit_file``) USER.md, the file every agent's prompt carries:
each is refused with a message naming the proposal, USER.md is unchanged, and bob's
prompt never carries alice's words. ``memdir proposals`` lists the proposals, ``accept``
writes one, ``reject`` drops one, and a proposal made from an older USER.md is refused.
The admin token (acting for alice) and the CLI still write USER.md directly.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support_reliability import LiveServer, child_env, start_server, stop_server
from test_rel_agent_access import mcp_session, text_of

from memdir.access import AccessTokens

pytestmark = pytest.mark.slow
PROPOSAL = re.compile(r"proposal (p-[0-9a-f]{10})")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    live = start_server(tmp_path / "home")
    yield live
    stop_server(live.process)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "memdir", "--home", str(home),
               "--set", "embeddings.provider=hash", *args]  # fmt: skip
    return subprocess.run(command, env=child_env(), capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip


def test_an_agent_token_proposes_and_a_person_accepts(server: LiveServer) -> None:
    store = AccessTokens(server.home)
    alice, bob = (store.create(agent, "test")[0] for agent in ("alice", "bob"))
    user_md = server.home / "workspace" / "USER.md"
    original = user_md.read_text(encoding="utf-8")
    ids: list[str] = []
    with server.client(alice) as http:
        put = http.put("/api/v1/files/USER.md", json={"content": "# USER.md\n\nalicewrote\n"})
        first_line = original.splitlines()[0]
        patch = http.patch(
            "/api/v1/files/USER.md",
            json={"old_text": first_line, "new_text": first_line + " alicepatched"},
        )
    for answer in (put, patch):
        assert answer.status_code == 403, answer.text
        ids.append(PROPOSAL.findall(answer.json()["detail"])[0])

    async def tools(client):  # type: ignore[no-untyped-def]
        written = await client.call_tool(
            "memory_write_file", {"path": "USER.md", "content": "# USER.md\n\nalicemcp\n"}
        )
        edited = await client.call_tool(
            "memory_edit_file",
            {"path": "USER.md", "old_text": first_line, "new_text": "alicemcpedit"},
        )
        return [written, edited]

    for result in mcp_session(server.url + "/mcp", alice, tools):
        assert result.is_error, text_of(result)
        ids.append(PROPOSAL.findall(text_of(result))[0])
    assert user_md.read_text(encoding="utf-8") == original
    with server.client(bob) as http:
        prompt = http.get("/api/v1/prompt").json()["prompt"]
    assert "alice" not in prompt

    listed = _cli(server.home, "proposals")
    assert listed.returncode == 0, listed.stderr
    assert all(pid in listed.stdout for pid in ids)
    assert "agent alice" in listed.stdout
    accepted = _cli(server.home, "proposals", "accept", ids[1])  # the REST PATCH
    assert accepted.returncode == 0, accepted.stderr
    assert f"{first_line} alicepatched" in user_md.read_text(encoding="utf-8")
    with server.client(bob) as http:
        assert "alicepatched" in http.get("/api/v1/prompt").json()["prompt"]
    stale = _cli(server.home, "proposals", "accept", ids[0])  # made from the older USER.md
    assert stale.returncode == 1
    assert "changed since proposal" in stale.stderr
    rejected = _cli(server.home, "proposals", "reject", ids[0])
    assert rejected.returncode == 0
    assert ids[0] not in _cli(server.home, "proposals").stdout
    missing = _cli(server.home, "proposals", "accept", "p-0000000000")
    assert missing.returncode == 1
    assert "`memdir proposals`" in missing.stderr

    with server.client() as admin:  # the admin token acting for alice writes it directly
        done = admin.put(
            "/api/v1/files/USER.md", params={"agent": "alice"},
            json={"content": "# USER.md\n\nadminwrote\n"},
        )  # fmt: skip
    assert done.status_code == 200, done.text
    assert "adminwrote" in user_md.read_text(encoding="utf-8")


def test_a_credential_is_never_kept_in_a_proposal(server: LiveServer) -> None:
    alice = AccessTokens(server.home).create("alice", "test")[0]
    with server.client(alice) as http:
        answer = http.put(
            "/api/v1/files/USER.md",
            json={"content": "# USER.md\n\n- AWS key AKIAIOSFODNN7EXAMPLE\n"},
        )
    assert answer.status_code == 422, answer.text
    assert not list((server.home / "proposals").glob("*.json"))


def test_an_agent_token_cannot_insert_rename_or_delete_a_shared_file(server: LiveServer) -> None:
    alice = AccessTokens(server.home).create("alice", "test")[0]
    user_md = server.home / "workspace" / "USER.md"
    original = user_md.read_text(encoding="utf-8")
    with server.client(alice) as http:
        answers = [
            http.post("/api/v1/files/insert",
                      json={"path": "USER.md", "line": 0, "text": "aliceinserted"}),
            http.post("/api/v1/files/rename", json={"from": "USER.md", "to": "memory/u.md"}),
            http.delete("/api/v1/files/USER.md"),
        ]  # fmt: skip
        http.put("/api/v1/files/memory/mine.md", json={"content": "alice's own note\n"})
        onto = http.post("/api/v1/files/rename", json={"from": "memory/mine.md", "to": "USER.md"})
    for answer in (*answers, onto):
        assert answer.status_code == 403, answer.text
        assert "shared by every agent" in answer.json()["detail"]
    assert user_md.read_text(encoding="utf-8") == original


def test_an_ambiguous_edit_of_a_shared_file_names_the_argument_to_use(
    server: LiveServer,
) -> None:
    """As an edit of the agent's own file does: REST names ``replace_all``, MCP too."""
    alice = AccessTokens(server.home).create("alice", "test")[0]
    user_md = server.home / "workspace" / "USER.md"
    user_md.write_text("# USER.md\n\n- likes tea\n- likes tea\n", encoding="utf-8")
    with server.client(alice) as http:
        twice = http.patch(
            "/api/v1/files/USER.md", json={"old_text": "likes tea", "new_text": "likes coffee"}
        )
        missing = http.patch(
            "/api/v1/files/USER.md", json={"old_text": "likes jazz", "new_text": "x"}
        )
    assert twice.status_code == 409, twice.text
    assert "occurs 2 times" in twice.json()["detail"]
    assert "replace_all" in twice.json()["detail"]
    assert "not found" in missing.json()["detail"]
    assert "read_file" in missing.json()["detail"] or "GET" in missing.json()["detail"]
    assert not list((server.home / "proposals").glob("*.json"))
