"""Every model-backed step degrades to its documented heuristic when the model fails.

The model is the real OpenAI-compatible client, pointed either at a port where no
server listens ("down") or at a local server whose answers are not the JSON asked
for ("bad JSON"). Each step must still do its work, the heuristic way, and log a
warning; nothing may fail the caller.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ScriptedServer, openai_answer
from typer.testing import CliRunner

from memdir.agent import ChatAgent
from memdir.context import ContextPolicy, Session
from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.cli import app
from memdir.llm import Completion, Message, OpenAIChatModel, ScriptedChatModel
from memdir.memory import Memory

runner = CliRunner()
TALK = [
    ("user", "Hello there, I want to plan the billing migration."),
    ("assistant", "Sure. What do you have in mind?"),
    ("user", "Remember that we decided to use PostgreSQL for billing."),
    ("assistant", "Noted: PostgreSQL for billing."),
    ("user", "Also my favourite editor is Helix, keep that in mind."),
]


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (the port was just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def bad_json() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    server.always(openai_answer("Sure! Here is what I think, in prose rather than JSON."))
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["down", "bad_json"])
def model_url(request: pytest.FixtureRequest) -> str:
    if request.param == "down":
        return closed_port_url()
    server: ScriptedServer = request.getfixturevalue("bad_json")
    return server.url + "/v1"


def run(home: Path, url: str, *args: str) -> tuple[int, str]:
    settings = [
        "embeddings.provider=hash", "llm.provider=openai", "llm.model=test-model",
        f"llm.base_url={url}", "llm.max_retries=0", "llm.timeout_s=5",
    ]  # fmt: skip
    flags = [part for pair in settings for part in ("--set", pair)]
    result = runner.invoke(app, ["--home", str(home), *flags, *args])
    return result.exit_code, result.stdout + result.stderr


def fell_back(caplog: pytest.LogCaptureFixture, what: str) -> bool:
    return any(
        r.levelno == logging.WARNING and what in r.getMessage() and "heuristic" in r.getMessage()
        for r in caplog.records
    )


def test_memory_save_uses_the_heuristic_decider(
    home: Path, model_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    code, out = run(home, model_url, "save", "My cat's name is Whiskerino")
    assert code == 0, out
    code, out = run(home, model_url, "save", "My cat is now called Luna")
    assert code == 0, out
    assert fell_back(caplog, "fact decision")
    code, out = run(home, model_url, "facts", "list", "--all", "--json")
    facts = json.loads(out)
    assert len(facts) == 2
    luna = next(f for f in facts if "Luna" in f["text"])
    assert luna["supersedes"] == next(f["id"] for f in facts if "Whiskerino" in f["text"])


def test_extraction_runs_the_heuristic(
    home: Path, model_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    Session(home, "s1").extend([Message(role, text) for role, text in TALK])
    code, out = run(home, model_url, "extract", "s1", "--json")
    assert code == 0, out
    result = json.loads(out)
    assert (result["ran"], result["method"]) == (True, "heuristic")
    assert result["facts_saved"] >= 1
    assert "the model failed" in result["error"]
    assert fell_back(caplog, "extraction")
    code, out = run(home, model_url, "recall", "which database for billing?")
    assert "PostgreSQL" in out


def test_consolidation_runs_the_heuristic(
    home: Path, model_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert run(home, model_url, "init")[0] == 0
    today = dt.date.today().isoformat()
    note = home / "workspace" / "memory" / f"{today}.md"
    note.write_text(f"# {today}\n\n- We decided to ship on Fridays.\n")
    code, out = run(home, model_url, "consolidate", "--json")
    assert code == 0, out
    assert "ship on Fridays" in json.loads(out)["added"][0]
    assert "ship on Fridays" in (home / "workspace" / "MEMORY.md").read_text()
    assert fell_back(caplog, "consolidation")


def test_session_note_is_named_by_time(
    home: Path, model_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    Session(home, "s1").extend([Message(role, text) for role, text in TALK])
    code, out = run(home, model_url, "session", "end", "s1")
    assert code == 0, out
    written = out.split()[1]
    assert written.removesuffix(".md").rsplit("-", 1)[-1].isdigit()  # HHMM, not a model slug
    assert any("named by time" in r.getMessage() for r in caplog.records)


def test_chat_turn_survives_a_side_model_that_is_down(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The flush, the fact decisions and the summary of a compaction all fall back."""
    side = OpenAIChatModel("test-model", base_url=closed_port_url(), max_retries=0)
    talker = ScriptedChatModel(lambda messages, tools, schema: Completion("ok " * 200))
    (home / "workspace").mkdir(parents=True)  # an empty home
    with Memory.open(home, embedder=HashEmbedder(), chat_model=side) as memory:
        policy = ContextPolicy(max_input_tokens=2048, preserve_recent_messages=2)
        with ChatAgent(memory, talker, policy=policy) as agent:
            events = list(agent.send("Remember that my dentist is Maria Alvarez in Porto.").events)
            for n in range(8):
                turn = agent.send(f"Tell me something long, number {n}.")
                assert turn.reply.startswith("ok")
                events.extend(turn.events)
        facts = memory.list_facts()
    assert any("Alvarez" in f.text for f in facts), facts
    assert fell_back(caplog, "flush")
    compactions = [e.text for e in events if e.kind == "compacted"]
    assert compactions
    assert all(text.startswith("compacted (extractive") for text in compactions)
    assert any("failed to summarise" in r.getMessage() for r in caplog.records)
