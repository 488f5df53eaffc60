"""memdir in OpenClaw's memory slot, end to end.

A live ``memdir serve`` (the real local embedding model) on a free loopback port; OpenClaw
installed from npm (``scripts/setup-openclaw``) runs its Gateway, which loads
``integrations/openclaw`` through its own plugin loader; each turn is a real ``openclaw
agent`` run whose model is scripted (``support_openclaw.ScriptedModel``): the tools are
invoked by OpenClaw's agent loop exactly as for a real model, the hooks run where OpenClaw
runs them, and what a tool returns is what the model receives.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support_openclaw import (
    OPENCLAW_BIN,
    PLUGIN,
    OpenClaw,
    Request,
    ScriptedModel,
    call,
    last_tool_result,
    openclaw_installed,
    reply,
    tool_call,
    tool_results,
    user_text,
)

from live_server import LiveServer, start_server, stop_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not openclaw_installed(), reason="OpenClaw is not installed: run scripts/setup-openclaw"
    ),
]

FACT = "The staging database listens on port 5433."
RECALL_TAG = "<memdir-recall>"


@pytest.fixture(scope="module")
def memdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_server(tmp_path_factory.mktemp("memdir") / "home", "--embedder", "configured")
    yield server
    stop_server(server.process)


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    scripted = ScriptedModel()
    yield scripted
    scripted.stop()


@pytest.fixture(scope="module")
def openclaw(
    memdir: LiveServer, model: ScriptedModel, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OpenClaw]:
    claw = OpenClaw(tmp_path_factory.mktemp("openclaw"), model, memdir.url,
                    memdir.home / "api-token", memdir.home / "agents" / "main")  # fmt: skip
    claw.configure()
    claw.start_gateway()
    yield claw
    claw.stop_gateway()


def memdir_get(memdir: LiveServer, path: str, **params: Any) -> Any:
    with memdir.client() as http:
        answer = http.get(path, params={"agent": "main", **params})
    assert answer.status_code == 200, answer.text
    return answer.json()


def read_cited_lines(request: Request) -> dict[str, Any]:
    """After memory_search: read exactly the lines the top hit cites."""
    top = last_tool_result(request)["results"][0]
    lines = top["endLine"] - top["startLine"] + 1
    return tool_call("memory_get", {"path": top["path"], "from": top["startLine"], "lines": lines})


def answer_with_citation(request: Request) -> dict[str, Any]:
    """After memory_get: answer with the lines read and the search hit's citation."""
    search, got = tool_results(request)[-2:]
    citation = search["results"][0]["citation"]
    return {"role": "assistant", "content": f"{got['text'].strip()} Source: {citation}"}


def final_text(result: dict[str, Any]) -> str:
    payloads = result.get("result", result)["payloads"]
    return "\n".join(p["text"] for p in payloads if p.get("text"))


def test_the_plugins_own_tests_pass_under_openclaws_node() -> None:
    done = subprocess.run([str(OPENCLAW_BIN / "node"), "--test", "test/units.test.js"],
                          cwd=PLUGIN, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_openclaw_loads_the_plugin_into_the_memory_slot(openclaw: OpenClaw, tmp_path: Path) -> None:
    done = openclaw.run("plugins", "inspect", "memdir", "--runtime", "--json",
                        env=openclaw.offline_env(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    inspected = json.loads(done.stdout)
    plugin = inspected["plugin"]
    assert (plugin["status"], plugin["kind"], plugin["memorySlotSelected"]) == (
        "loaded",
        "memory",
        True,
    ), plugin
    manifest = json.loads((PLUGIN / "openclaw.plugin.json").read_text())
    assert plugin["toolNames"] == manifest["contracts"]["tools"]
    assert {h["name"] for h in inspected["typedHooks"]} == {"before_prompt_build", "agent_end"}
    assert [d for d in inspected["diagnostics"] if d["level"] == "error"] == []


def test_a_fact_saved_in_one_session_is_found_and_cited_in_another(
    openclaw: OpenClaw, model: ScriptedModel, memdir: LiveServer
) -> None:
    saved = openclaw.turn("save-1", "Remember where the staging database listens.",
                          call("memory_save", {"content": FACT, "category": "fact"}),
                          reply("Saved."))  # fmt: skip
    assert final_text(saved) == "Saved."
    save_result = last_tool_result(model.requests[1])
    assert save_result["action"] == "add", save_result
    assert save_result["path"].startswith("memory/"), save_result

    answered = openclaw.turn(
        "ask-2", "Which port does the staging database listen on?",
        call("memory_search", {"query": "staging database port", "maxResults": 3}),
        read_cited_lines, answer_with_citation,
    )  # fmt: skip
    search = last_tool_result(model.requests[1])
    top = search["results"][0]
    assert FACT in top["snippet"], search
    assert top["path"] == save_result["path"]
    assert top["citation"] == f"{top['path']}#L{top['startLine']}", top
    assert 0 < top["score"] <= 1.5
    got = last_tool_result(model.requests[2])
    assert got["status"] == "ok", got
    assert FACT in got["text"], got
    assert (got["path"], got["from"], got["lines"]) == (top["path"], top["startLine"], 1)
    final = final_text(answered)
    assert "5433" in final, final
    assert top["citation"] in final, final
    # the citation names memdir's own file and line: the fact is there, not in a copy
    content = memdir_get(memdir, f"/api/v1/files/{top['path']}")["content"]
    assert FACT in content.splitlines()[top["startLine"] - 1]
    # and before that turn, recall put the same line in front of the model
    recalled = user_text(model.requests[0])
    assert RECALL_TAG in recalled, recalled
    assert f"- {top['citation']} (score" in recalled, recalled


def forget_first_recalled(request: Request) -> dict[str, Any]:
    """After memory_recall: retire the first fact it found, with a reason."""
    first = last_tool_result(request)["facts"][0]
    fact = first.get("fact", first)
    return tool_call("memory_forget", {"factId": fact["id"], "reason": "moved to port 5434"})


def test_a_fact_is_recalled_then_forgotten_and_stays_on_record(
    openclaw: OpenClaw, model: ScriptedModel, memdir: LiveServer
) -> None:
    with memdir.client() as http:
        http.post("/api/v1/facts", params={"agent": "main"}, json={"content": FACT})
    openclaw.turn("facts-8", "The staging database moved; forget the old port.",
                  call("memory_recall", {"query": "staging database port"}),
                  forget_first_recalled, reply("Forgotten."))  # fmt: skip
    recalled = json.dumps(last_tool_result(model.requests[1]))
    assert FACT in recalled
    forgotten = last_tool_result(model.requests[2])["forgotten"]
    assert (forgotten["text"], forgotten["forgotten_reason"]) == (FACT, "moved to port 5434")
    now = memdir_get(memdir, "/api/v1/facts/recall", query="staging database port")
    assert FACT not in json.dumps(now["facts"])
    note = memdir_get(memdir, f"/api/v1/files/{forgotten['source_path']}")["content"]
    assert FACT in note  # not deleted: the line stays, and the forget line says why
    assert "moved to port 5434" in note


def test_recall_before_a_turn_injects_nothing_when_nothing_is_found(
    openclaw: OpenClaw, model: ScriptedModel, memdir: LiveServer
) -> None:
    with memdir.client() as http:  # memory is not empty: the floor, not emptiness, decides
        http.post("/api/v1/facts", params={"agent": "main"}, json={"content": FACT})
    question = "What did my sister name her new sailboat?"
    found = memdir_get(memdir, "/api/v1/search", query=question)
    assert found["hits"] == [], found
    assert found["notice"], found
    openclaw.turn("unrelated-3", question, reply("I don't know."))
    assert RECALL_TAG not in user_text(model.requests[0])
    assert "recall before the turn skipped" not in openclaw.gateway_log.read_text()


def test_capture_after_a_turn_extracts_what_the_user_said(
    openclaw: OpenClaw, memdir: LiveServer
) -> None:
    openclaw.turn("capture-4", "I prefer dark roast coffee in the mornings.", reply("Noted."))
    openclaw.turn("capture-4", "My favourite editor is Helix.", reply("Got it."))
    transcript = memdir.home / "sessions" / "main" / "openclaw-capture-4.jsonl"
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [(m["role"], m["content"]) for m in lines] == [
        ("user", "I prefer dark roast coffee in the mornings."),
        ("assistant", "Noted."),
        ("user", "My favourite editor is Helix."),
        ("assistant", "Got it."),
    ]  # the second turn resent the first one's messages: kept once
    facts = [f["text"] for f in memdir_get(memdir, "/api/v1/facts")["facts"]]
    assert "The user prefers dark roast coffee in the mornings" in facts, facts
    assert "The user's favourite editor is Helix" in facts, facts


def test_one_folder_is_both_workspaces(
    openclaw: OpenClaw, model: ScriptedModel, memdir: LiveServer
) -> None:
    """OpenClaw's workspace is memdir's agent folder: what OpenClaw seeds and what its agent
    writes with its own file tools is memdir's memory, found and cited by memory_search."""
    note = "# 2026-01-15\n\n- Decided: the release train leaves every second Tuesday.\n"
    openclaw.turn("layout-6", "Note the release train decision in today's log.",
                  call("write", {"path": "memory/2026-01-15.md", "content": note}),
                  reply("Written."))  # fmt: skip
    assert (openclaw.workspace / "memory" / "2026-01-15.md").read_text() == note
    openclaw.turn("layout-7", "When does the release train leave?",
                  call("memory_search", {"query": "when does the release train leave"}),
                  reply("Every second Tuesday."))  # fmt: skip
    top = last_tool_result(model.requests[1])["results"][0]
    assert (top["path"], top["citation"]) == ("memory/2026-01-15.md", "memory/2026-01-15.md#L3")
    # the bootstrap files OpenClaw seeded are the agent's own files in memdir's prompt
    seeded = (openclaw.workspace / "SOUL.md").read_text()
    prompt = memdir_get(memdir, "/api/v1/prompt")["prompt"]
    assert seeded.splitlines()[-1].strip() in prompt


def test_status_reports_the_index_and_embedder(
    openclaw: OpenClaw, memdir: LiveServer, tmp_path: Path
) -> None:
    with memdir.client() as http:  # something indexed: status then has figures to report
        http.post("/api/v1/facts", params={"agent": "main"}, json={"content": FACT})
        http.get("/api/v1/search", params={"agent": "main", "query": "staging"})
    done = openclaw.run("memdir", "status", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    index = memdir_get(memdir, "/api/v1/index/status")
    assert report["ok"]
    assert report["agent"] == "main"
    assert (report["status"]["files"], report["status"]["chunks"]) == (
        index["files"],
        index["chunks"],
    )
    assert report["status"]["files"] >= 1
    # OpenClaw's own status asks the memory slot's runtime the same (it inspects plugins only
    # when no Gateway answers: "Local plugin inspection is not collected in online status")
    offline = openclaw.offline_env(tmp_path)  # --timeout: no waiting for the Gateway to start
    done = openclaw.run("status", "--json", "--all", "--timeout", "2000", env=offline)
    assert done.returncode == 0, done.stderr
    memory = json.loads(done.stdout)["memory"]
    assert (memory["backend"], memory["agentId"]) == ("memdir", "main"), memory
    assert (memory["provider"], memory["model"]) == ("local", index["identity"]["model"])
    assert memory["files"] == index["files"]
    assert memory["vector"]["available"] is True


def test_a_wrong_token_is_refused_with_the_setting_to_fix(
    openclaw: OpenClaw, tmp_path: Path
) -> None:
    wrong = tmp_path / "wrong-token"
    wrong.write_text("not-the-token\n")
    env = openclaw.offline_env(tmp_path, tokenFile=str(wrong))
    done = openclaw.run("memdir", "status", "--json", env=env)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert "refused the token (401)" in report["error"]
    assert "tokenFile" in report["error"]


def test_session_end_writes_the_conversation_as_a_note(
    openclaw: OpenClaw, memdir: LiveServer
) -> None:
    since = openclaw.log_size()
    set_capture = openclaw.run("config", "set", "plugins.entries.memdir.config.capture", "note")
    assert set_capture.returncode == 0, set_capture.stderr
    openclaw.wait_for_log("config hot reload applied", since)  # the Gateway reloads the plugin
    openclaw.turn("note-5", "We decided to ship the release on Friday.", reply("Friday it is."))
    openclaw.stop_gateway()  # ends every session: OpenClaw's session_end hook
    notes = sorted((memdir.home / "agents" / "main" / "memory").glob("*-*-*-*.md"))
    written = [n.read_text() for n in notes if "openclaw-note-5" in n.read_text()]
    assert len(written) == 1, [n.name for n in notes]
    assert "We decided to ship the release on Friday." in written[0]
    assert "Friday it is." in written[0]
