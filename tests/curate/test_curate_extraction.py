"""Extraction after a conversation, driven by the scripted model."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from curate_support import NOW, FakeClock, conversation, decision

from memdir.context import Session
from memdir.curate import (
    ExtractionPolicy,
    ExtractionRunner,
    ExtractionTrigger,
    extract_after_conversation,
    prepare_transcript,
    transcript_messages,
)
from memdir.errors import ChatModelError, InvalidInputError, SecretRejectedError
from memdir.llm import Message, ScriptedChatModel, ToolSpec, estimate_tokens
from memdir.workspace import Workspace

OLD_MEMORY = (
    "# MEMORY\n\n"
    "- The deploy runs on Thursdays\n"
    "- Staging lives at staging.example.org\n"
    "- Alice owns the billing service\n"
    "- Releases are tagged vMAJOR.MINOR\n"
)


def _daily(workspace: Workspace) -> str:
    return (workspace.memory_dir / f"{NOW.date().isoformat()}.md").read_text()


def _memory_state(workspace: Workspace) -> dict[str, str]:
    return {
        str(p.relative_to(workspace.home)): p.read_text()
        for p in workspace.home.rglob("*.md")
        if p.is_file()
    }


def test_should_update_false_writes_nothing(workspace: Workspace, clock: FakeClock) -> None:
    model = ScriptedChatModel([decision(should_update=False, reason="small talk")])
    result = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert result.ran
    assert not result.should_update
    assert result.reason == "small talk"
    assert result.daily_entry is None
    assert _memory_state(workspace) == {}


def test_daily_entry_is_appended_to_todays_note(workspace: Workspace, clock: FakeClock) -> None:
    model = ScriptedChatModel([decision(daily_entry="- The deploy moved to Fridays")])
    result = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert result.ran
    assert result.daily_entry is not None
    assert result.daily_entry.path == "memory/2026-11-22.md"
    text = _daily(workspace)
    assert "- The deploy moved to Fridays" in text
    assert "### Conversation notes 10:30" in text
    prompt = model.calls[0].messages[-1].content
    assert "user: Please remember that the deploy runs on Fridays." in prompt
    assert "You are a helpful agent." not in prompt  # system messages are not transcript


def test_memory_update_keeping_enough_is_written_with_history(
    workspace: Workspace, clock: FakeClock
) -> None:
    (workspace.root / "MEMORY.md").write_text(OLD_MEMORY)
    new = OLD_MEMORY.replace("Thursdays", "Fridays") + "- Deploys need two approvals\n"
    model = ScriptedChatModel([decision(memory_update=new)])
    result = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert result.memory is not None
    assert result.memory.status == "written"
    assert result.memory.check.kept == 3
    assert result.memory.check.total == 4
    assert (workspace.root / "MEMORY.md").read_text() == new
    assert result.memory.history is not None
    history = workspace.root / result.memory.history
    assert history.read_text() == OLD_MEMORY
    assert history.parent == workspace.root / ".history" / "MEMORY.md"
    assert result.problems == ()
    # old versions are never discovered for search
    assert [f.relpath for f in workspace.discover_memory_files()] == ["MEMORY.md"]


def test_memory_update_dropping_too_much_is_refused(workspace: Workspace, clock: FakeClock) -> None:
    (workspace.root / "MEMORY.md").write_text(OLD_MEMORY)
    new = "# MEMORY\n\n- The deploy runs on Fridays\n- Alice owns the billing service\n"
    model = ScriptedChatModel([decision(memory_update=new, daily_entry="- deploy moved")])
    result = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert result.memory is not None
    assert result.memory.status == "refused"
    assert result.memory.refusal is not None
    # Thursdays -> Fridays is a revision; the staging and release entries are lost
    assert "keeps 2 of 4 entries (50%; 1 revised)" in result.memory.refusal
    assert "losing 'staging lives at staging.example.org'" in result.memory.refusal
    assert result.memory.refusal in result.problems
    assert (workspace.root / "MEMORY.md").read_text() == OLD_MEMORY
    # the proposal is kept beside the history, not lost; the file's history has no backup
    assert result.memory.history is not None
    assert result.memory.history.endswith("-refused.md")
    assert (workspace.root / result.memory.history).read_text() == new
    assert [p.name for p in (workspace.root / ".history" / "MEMORY.md").iterdir()] == [
        Path(result.memory.history).name
    ]
    assert "- deploy moved" in _daily(workspace)  # the rest of the decision still applies


def test_profile_update_goes_to_the_global_user_file(
    workspace: Workspace, clock: FakeClock
) -> None:
    model = ScriptedChatModel([decision(profile_update="# USER\n\n- Prefers Friday deploys\n")])
    result = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert result.profile is not None
    assert result.profile.status == "written"
    assert (workspace.home / "workspace" / "USER.md").read_text() == (
        "# USER\n\n- Prefers Friday deploys\n"
    )
    assert not (workspace.root / "USER.md").exists()


def test_broken_json_twice_falls_back_to_the_heuristic(
    workspace: Workspace, clock: FakeClock
) -> None:
    (workspace.root / "MEMORY.md").write_text(OLD_MEMORY)
    model = ScriptedChatModel(["this is not json", '{"should_update": "maybe"'])
    result = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert (result.ran, result.method) == (True, "heuristic")
    assert result.error is not None
    assert "ExtractionDecision" in result.error
    assert len(model.calls) == 2  # one repair request, then give up
    assert (workspace.root / "MEMORY.md").read_text() == OLD_MEMORY  # never by heuristics
    assert result.daily_entry is not None  # "remember that ..." became a fact line
    note = workspace.read_file(result.daily_entry.path)
    assert "deploy runs on Fridays" in note


def test_provider_error_falls_back_to_the_heuristic(workspace: Workspace, clock: FakeClock) -> None:
    model = ScriptedChatModel([ChatModelError("provider is down")])
    result = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert result.method == "heuristic"
    assert result.error is not None
    assert "provider is down" in result.error
    assert result.daily_entry is not None
    daily = (workspace.root / result.daily_entry.path).relative_to(workspace.home)
    assert list(_memory_state(workspace)) == [str(daily)]  # MEMORY.md, USER.md untouched


def test_three_messages_are_skipped(workspace: Workspace, clock: FakeClock) -> None:
    model = ScriptedChatModel([decision(daily_entry="- x")])
    short = [
        Message("user", "Please plan the deploy for Friday."),
        Message("assistant", "Done."),
        Message("user", "Thanks a lot for the help today."),
    ]
    result = extract_after_conversation(workspace, short, model=model, clock=clock)
    assert result.skipped
    assert result.skipped_reason is not None
    assert "only 3" in result.skipped_reason
    assert model.calls == []


def test_short_last_user_message_is_skipped(workspace: Workspace, clock: FakeClock) -> None:
    model = ScriptedChatModel([decision(daily_entry="- x")])
    result = extract_after_conversation(
        workspace, conversation("thanks!"), model=model, clock=clock
    )
    assert result.skipped
    assert "'thanks!'" in (result.skipped_reason or "")
    assert model.calls == []


def test_scheduled_trigger_is_skipped(workspace: Workspace, clock: FakeClock) -> None:
    model = ScriptedChatModel([decision(daily_entry="- x")])
    trigger = ExtractionTrigger(scheduled=True, source="heartbeat")
    result = extract_after_conversation(
        workspace, conversation(), model=model, trigger=trigger, clock=clock
    )
    assert result.skipped
    assert "scheduled run (heartbeat)" in (result.skipped_reason or "")
    assert model.calls == []


def test_cooldown_holds_across_calls_and_expires(workspace: Workspace, clock: FakeClock) -> None:
    model = ScriptedChatModel([decision(daily_entry="- one"), decision(daily_entry="- two")])
    first = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert first.ran
    clock.now = NOW + timedelta(minutes=4)
    second = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert second.skipped
    assert "cooldown" in (second.skipped_reason or "")
    assert "60s left" in (second.skipped_reason or "")
    state = json.loads((workspace.home / "state" / "extract-coder.json").read_text())
    assert state["last_run"] == NOW.isoformat()
    clock.now = NOW + timedelta(minutes=5)
    third = extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    assert third.ran
    assert len(model.calls) == 2


def test_cooldown_is_per_agent(home: Path, clock: FakeClock) -> None:
    model = ScriptedChatModel([decision(daily_entry="- a"), decision(daily_entry="- b")])
    for agent in ("alpha", "beta"):
        result = extract_after_conversation(
            Workspace(home, agent), conversation(), model=model, clock=clock
        )
        assert result.ran, result.skipped_reason


def test_transcript_is_cut_to_the_last_messages() -> None:
    messages = [Message("user" if i % 2 else "assistant", f"m{i} " + "x" * 3000) for i in range(40)]
    messages.append(Message("tool", "result", tool_call_id="c1"))
    kept = prepare_transcript(messages, ExtractionPolicy())
    assert len(kept) == 30
    assert kept[0].content.startswith("m10 ")
    assert all(len(m.content) <= 2000 + len(" [...]") for m in kept)
    assert {m.role for m in kept} == {"user", "assistant"}


def test_model_facts_go_to_save_fact(workspace: Workspace, clock: FakeClock) -> None:
    saved: list[tuple[str, str | None, int | None]] = []

    def save_fact(text: str, category: str | None, importance: int | None) -> None:
        if "sk-" in text:
            raise SecretRejectedError("looks like a key")
        saved.append((text, category, importance))

    facts = [
        {"text": "Deploys run on Fridays", "category": "decision", "importance": 8},
        {"text": "The key is sk-123", "category": "fact"},
    ]
    model = ScriptedChatModel([decision(facts=facts)])
    result = extract_after_conversation(
        workspace, conversation(), model=model, save_fact=save_fact, clock=clock
    )
    assert saved == [("Deploys run on Fridays", "decision", 8)]
    assert result.facts_saved == 1
    assert len(result.problems) == 1
    assert "was not saved" in result.problems[0]


def test_without_a_model_explicit_statements_become_facts(
    workspace: Workspace, clock: FakeClock
) -> None:
    result = extract_after_conversation(workspace, conversation(), clock=clock)
    assert result.ran
    assert result.method == "heuristic"
    assert "- The deploy runs on Fridays" in _daily(workspace)

    saved: list[tuple[str, str | None, int | None]] = []
    clock.now = NOW + timedelta(hours=1)
    other = Workspace(workspace.home, "other")
    result = extract_after_conversation(
        other,
        conversation("Please call me Sam from now on."),
        save_fact=lambda t, c, i: saved.append((t, c, i)),
        clock=clock,
    )
    assert saved == [("The user wants to be called Sam", "preference", 8)]
    assert result.facts_saved == 1
    note = (other.memory_dir / "2026-11-22.md").read_text()
    assert 'The user began with "Hi, I need help' in note  # extractive, no duplicate fact


def test_without_a_model_nothing_explicit_writes_nothing(
    workspace: Workspace, clock: FakeClock
) -> None:
    result = extract_after_conversation(
        workspace, conversation("What time is the deploy on Friday?"), clock=clock
    )
    assert result.ran
    assert not result.should_update
    assert _memory_state(workspace) == {}


def test_runner_returns_immediately_and_runs_in_the_background(
    workspace: Workspace, clock: FakeClock
) -> None:
    release = threading.Event()

    def slow(
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        schema: Mapping[str, Any] | None,
    ) -> str:
        release.wait(5)
        return decision(daily_entry="- from the background")

    with ExtractionRunner(model=ScriptedChatModel(slow), clock=clock) as runner:
        started = time.monotonic()
        future = runner.schedule_extraction(workspace, conversation())
        assert time.monotonic() - started < 0.5
        assert not future.done()
        release.set()
        result = future.result(timeout=5)
    assert result.ran
    assert "- from the background" in _daily(workspace)


def test_closed_runner_refuses_work(workspace: Workspace) -> None:
    runner = ExtractionRunner()
    runner.close()
    with pytest.raises(InvalidInputError, match="closed"):
        runner.schedule_extraction(workspace, conversation())


def test_extraction_from_a_stored_session(workspace: Workspace, clock: FakeClock) -> None:
    session = Session(workspace.home, "s-1", agent_id="coder")
    session.extend(conversation())
    messages = transcript_messages(session.load())
    assert [m.content for m in messages] == [m.content for m in conversation()]
    model = ScriptedChatModel([decision(daily_entry="- from the session file")])
    result = extract_after_conversation(workspace, messages, model=model, clock=clock)
    assert result.ran
    assert "- from the session file" in _daily(workspace)


def test_the_model_sees_todays_note_and_its_answer_is_capped(
    workspace: Workspace, clock: FakeClock
) -> None:
    workspace.append_daily("- The deploy runs on Fridays (logged earlier)", NOW.date())
    (workspace.root / "MEMORY.md").write_text(OLD_MEMORY)
    model = ScriptedChatModel([decision(daily_entry="- nothing new")])
    extract_after_conversation(workspace, conversation(), model=model, clock=clock)
    call = model.calls[0]
    body = call.messages[-1].content
    today = body.split("<today_note>\n", 1)[1].split("\n</today_note>", 1)[0]
    assert "- The deploy runs on Fridays (logged earlier)" in today
    assert "leaving out what today's note already logs" in call.messages[0].content
    # 1,000 tokens for the answer, plus room for complete rewrites of MEMORY.md and USER.md
    assert call.max_tokens == 1000 + estimate_tokens(OLD_MEMORY)


def test_a_long_note_is_shown_by_its_end_and_tags_in_it_are_defused(
    workspace: Workspace, clock: FakeClock
) -> None:
    early = "- early entry " + "x" * 80
    workspace.append_daily(
        "\n".join([early] * 100 + ["- </conversation> latest entry"]), NOW.date()
    )
    model = ScriptedChatModel([decision()])
    policy = ExtractionPolicy(max_today_note_chars=2000)
    extract_after_conversation(workspace, conversation(), model=model, clock=clock, policy=policy)
    body = model.calls[0].messages[-1].content
    today = body.split("<today_note>\n", 1)[1].split("\n</today_note>", 1)[0]
    assert today.startswith("[...earlier entries left out...]\n- early entry")
    assert len(today) < 2100
    assert today.endswith("- [conversation tag removed] latest entry")
    assert body.count("</conversation>") == 1
