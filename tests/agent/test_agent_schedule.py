"""The heartbeat, the curation switches and the extraction thresholds, through `memdir
heartbeat`, `memdir chat`, `memdir extract` and the scheduler `memdir serve` runs."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from agent_support import tool_call
from test_chat_cli import chat_app
from typer.testing import CliRunner

from memdir.agent import SCRIPT_ENV, ChatAgent
from memdir.agent.heartbeat import HEARTBEAT_OK, checklist, run_heartbeat
from memdir.config import CurateSettings
from memdir.context import Session
from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.cli.server import curation_schedule
from memdir.interfaces.http.memories import AgentMemories
from memdir.llm import Completion, Message, ScriptedChatModel, ToolSpec
from memdir.memory import Memory

CHECKLIST = "# HEARTBEAT.md\n\n## Checklist\n\n- Check that last night's backup ran.\n"
SCRIPT = """
from memdir.llm import Completion, ToolCall


def reply(messages, tools, schema):
    last = messages[-1]
    system = messages[0].content
    if last.role == "tool":
        return "Noted: the backup check is in the daily note."
    if last.content.startswith("Heartbeat:"):
        call = ToolCall("h1", "memory_save", {"content": "The backup of last night ran."})
        return Completion("", tool_calls=(call,))
    return "saw MEMORY" if "PIN hint" in system else "no MEMORY"
"""


def backup_brain(
    messages: Sequence[Message], tools: Sequence[ToolSpec] | None, schema: Any
) -> str | Completion:
    if messages[-1].role == "tool":
        return "The backup ran; noted."
    if "backup" in messages[-1].content and messages[-1].content.startswith("Heartbeat:"):
        return tool_call("h1", "memory_save", content="The backup of last night ran.")
    return HEARTBEAT_OK


@pytest.fixture
def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "heartbeat_script.py"
    path.write_text(SCRIPT, encoding="utf-8")
    monkeypatch.setenv(SCRIPT_ENV, str(path))
    return path


def cli(home: Path, *args: str, typed: str | None = None) -> tuple[int, str]:
    base = ["--home", str(home), "--set", "embeddings.provider=hash",
            "--set", "llm.provider=scripted"]  # fmt: skip
    result = CliRunner().invoke(chat_app(), [*base, *args], input=typed)
    return result.exit_code, result.stdout + result.stderr


def seeded(home: Path, heartbeat: str = CHECKLIST) -> Path:
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        memory.finish_ritual()
    (home / "workspace" / "HEARTBEAT.md").write_text(heartbeat)
    return home / "workspace"


def today_note(root: Path) -> str:
    return (root / "memory" / f"{dt.date.today()}.md").read_text(encoding="utf-8")


def test_checklist_is_the_section_or_every_bullet() -> None:
    assert checklist(CHECKLIST) == ["Check that last night's backup ran."]
    template = "## Rules\n\n- be brief\n\n## Checklist\n\n- (for example: tidy MEMORY.md)\n"
    assert checklist(template) == []
    assert checklist("- water the plants\n- feed the cat\n") == ["water the plants", "feed the cat"]


def test_memdir_heartbeat_runs_the_checklist_and_notes_it(home: Path, script: Path) -> None:
    root = seeded(home)
    code, out = cli(home, "heartbeat", "--json")
    assert code == 0, out
    run = json.loads(out)
    assert (run["ran"], run["tools"]) == (True, ["memory_save"])
    note = today_note(root)
    assert "### Heartbeat" in note
    assert "- tools: memory_save" in note
    assert "The backup of last night ran." in note  # the fact the heartbeat saved
    assert (home / "sessions" / "global" / f"heartbeat-{dt.date.today():%Y%m%d}.jsonl").is_file()


def test_an_empty_checklist_or_an_open_ritual_skips_without_a_model_call(home: Path) -> None:
    seeded(home, "# HEARTBEAT.md\n\n## Checklist\n\n- (for example: check the backups)\n")
    model = ScriptedChatModel(backup_brain)
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        run = run_heartbeat(memory, model)
        assert run.skipped_reason == "the checklist of HEARTBEAT.md is empty"
        (home / "workspace" / "HEARTBEAT.md").write_text(CHECKLIST)
        (home / "workspace" / "BOOTSTRAP.md").write_text("# BOOTSTRAP.md\n")
        assert "first-run ritual" in str(run_heartbeat(memory, model).skipped_reason)
    assert model.calls == []


def test_serve_runs_the_heartbeat_only_when_switched_on(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = seeded(home)
    with_model = lambda agent: Memory.open(  # noqa: E731
        home, agent, embedder=HashEmbedder(), chat_model=ScriptedChatModel(backup_brain)
    )
    memories = AgentMemories(with_model)
    default = curation_schedule(CurateSettings())(memories)
    assert sorted(default.next_runs()) == ["consolidate"]  # the heartbeat is off by default
    assert curation_schedule(CurateSettings(auto_consolidate=False))(memories) is None
    scheduler = curation_schedule(
        CurateSettings(auto_consolidate=False, heartbeat=True, heartbeat_cron="*/5 * * * *")
    )(memories)
    runs = scheduler.run_due(now=dt.datetime.now().astimezone() + dt.timedelta(minutes=6))
    assert [(r.name, r.error) for r in runs] == [("heartbeat", None)]
    assert "- tools: memory_save" in today_note(root)
    memories.close()
    no_model = AgentMemories(lambda agent: Memory.open(home, agent, chat_model=None))
    assert (
        curation_schedule(CurateSettings(auto_consolidate=False, heartbeat=True))(no_model) is None
    )
    assert any("no chat model is configured" in r.getMessage() for r in caplog.records)
    no_model.close()


def test_an_agent_runs_only_a_checklist_of_its_own(home: Path) -> None:
    seeded(home)
    model = ScriptedChatModel(backup_brain)
    with Memory.open(home, "coder", embedder=HashEmbedder(), chat_model=None) as coder:
        coder.init()
        coder.finish_ritual()
        assert "of its own" in str(run_heartbeat(coder, model).skipped_reason)
        coder.write_file("HEARTBEAT.md", "- Check the nightly build of the coder.\n")
        run = run_heartbeat(coder, model)
    assert (run.agent, run.ran) == ("coder", True)
    assert len(model.calls) == 1


def test_a_quiet_heartbeat_writes_nothing(home: Path) -> None:
    root = seeded(home, "- Tell me if the disk is over 90% full.\n")
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        run = run_heartbeat(memory, ScriptedChatModel(backup_brain))
    assert run.quiet
    assert not (root / "memory" / f"{dt.date.today()}.md").exists()


def test_chat_session_kind_and_auto_extract(home: Path, script: Path) -> None:
    root = seeded(home)
    (root / "MEMORY.md").write_text("- PIN hint: the cat's birthday\n")
    typed = "Remember that the staging database is called heron.\n/status\n"
    code, out = cli(home, "chat", "--session-kind", "group", typed=typed)
    assert code == 0, out
    assert "agent> no MEMORY" in out
    assert "group" in out  # /status shows the session kind
    assert "memory extraction skipped: only 2 user/assistant messages" in out  # it was asked for
    code, out = cli(home, "--set", "curate.auto_extract=false", "chat", typed="Hello there\n")
    assert "agent> saw MEMORY" in out
    assert "memory extraction" not in out  # nothing was scheduled at all
    assert "memory curated" not in out


def test_extraction_thresholds_come_from_the_settings(home: Path) -> None:
    Session(home, "short").extend(
        [
            Message("user", "Remember that the staging database is called heron."),
            Message("assistant", "Noted."),
        ]
    )
    code, out = cli(home, "--set", "llm.provider=none", "extract", "short", "--json")
    assert json.loads(out)["skipped_reason"].startswith("only 2 user/assistant messages")
    code, out = cli(
        home, "--set", "llm.provider=none", "--set", "curate.extract_min_messages=2",
        "extract", "short", "--json",
    )  # fmt: skip
    assert code == 0, out
    result = json.loads(out)
    assert (result["ran"], result["facts_saved"]) == (True, 1)


def test_a_python_chat_agent_takes_its_policies_from_the_settings(home: Path) -> None:
    settings = {"curate": {"extract_min_messages": "2"}, "context": {"summary_max_tokens": "99"}}
    (home / "workspace").mkdir(parents=True)  # an empty home
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None, overrides=settings) as memory:
        agent = ChatAgent(memory, ScriptedChatModel(["Noted."]))
        assert agent.policy.summary_max_tokens == 99
        agent.send("Remember that the staging database is called heron.")
        (result,) = agent.close()
    assert (result.ran, result.facts_saved) == (True, 1)  # 2 messages were enough
