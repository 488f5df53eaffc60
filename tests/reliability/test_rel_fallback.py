"""Edits of bootstrap files an agent reads from the global workspace (fallback).

The first edit of such a file makes the agent's own copy; concurrent first
edits must apply one after the other (none lost). USER.md is one file for every
agent: an agent's edit changes the global file, which the prompt reads.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support_reliability import start_server, stop_server

from memdir.workspace import Workspace

BASE = "# Heartbeat\n\n- line a: 0\n- line b: 0\n"


def _edit_both(home: Path, agent: str) -> None:
    barrier = threading.Barrier(2)

    def edit(line: str) -> None:
        workspace = Workspace(home, agent)
        barrier.wait()
        workspace.edit_file("HEARTBEAT.md", f"- line {line}: 0", f"- line {line}: 1")

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(edit, ["a", "b"]))


def test_concurrent_first_edits_of_a_fallback_file_keep_both(home: Path) -> None:
    Workspace(home).write_file("HEARTBEAT.md", BASE)
    for trial in range(40):
        _edit_both(home, f"agent{trial}")
        copy = Workspace(home, f"agent{trial}").read_file("HEARTBEAT.md")
        assert copy == BASE.replace(": 0", ": 1"), f"trial {trial} lost an edit"
    assert Workspace(home).read_file("HEARTBEAT.md") == BASE


@pytest.mark.slow
def test_rest_patches_of_a_fallback_file_and_of_user_md(tmp_path: Path) -> None:
    server = start_server(tmp_path / "home")
    try:
        with server.client() as http:
            put = http.put("/api/v1/files/HEARTBEAT.md", json={"content": BASE})
            assert put.status_code == 200, put.text

            def patch(agent: str, line: str) -> int:
                body = {"old_text": f"- line {line}: 0", "new_text": f"- line {line}: 1"}
                return http.patch(
                    "/api/v1/files/HEARTBEAT.md", params={"agent": agent}, json=body
                ).status_code

            with ThreadPoolExecutor(2) as pool:
                for trial in range(15):
                    agent = f"rest{trial}"
                    assert list(pool.map(patch, [agent, agent], ["a", "b"])) == [200, 200]
                    got = http.get("/api/v1/files/HEARTBEAT.md", params={"agent": agent})
                    assert got.json()["content"] == BASE.replace(": 0", ": 1"), trial
            user = http.get("/api/v1/files/USER.md").json()["content"]
            first_line = user.splitlines()[0]
            edited = http.patch(
                "/api/v1/files/USER.md",
                params={"agent": "newbie"},
                json={"old_text": first_line, "new_text": first_line + " (Ada)"},
            )
            assert edited.status_code == 200, edited.text
            prompt = http.get("/api/v1/prompt", params={"agent": "newbie"}).json()["prompt"]
            assert first_line + " (Ada)" in prompt
            assert first_line + " (Ada)" in http.get("/api/v1/prompt").json()["prompt"]
            assert not (server.home / "agents" / "newbie" / "USER.md").exists()
    finally:
        stop_server(server.process)
