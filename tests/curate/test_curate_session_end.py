"""Session end (/new): the last messages become a named note in memory/."""

from __future__ import annotations

import json

import pytest
from curate_support import FakeClock, conversation

from memdir.curate import end_session, sanitise_slug
from memdir.errors import ChatModelError
from memdir.llm import Message, ScriptedChatModel
from memdir.workspace import Workspace


def test_note_named_by_the_model(workspace: Workspace, clock: FakeClock) -> None:
    model = ScriptedChatModel([json.dumps({"slug": "Deploy Schedule!"})])
    note = end_session(workspace, conversation(), model=model, session_id="s-1", clock=clock)
    assert note is not None
    assert note.path == "memory/2026-11-22-deploy-schedule.md"
    assert note.slug_method == "model"
    assert note.message_count == 5
    text = (workspace.root / note.path).read_text()
    assert text.startswith("# Session 2026-11-22: deploy-schedule\n")
    assert "- **Time**: 2026-11-22T10:30+00:00" in text
    assert "- **Session**: s-1" in text
    assert "- **user**: Hi, I need help with our deployment schedule." in text
    assert "- **assistant**: Sure, what would you like to know about it?" in text
    assert "You are a helpful agent." not in text
    # session notes are memory files but not daily notes
    assert note.path in [f.relpath for f in workspace.discover_memory_files()]
    assert workspace.list_daily_notes() == []


def test_note_named_by_time_without_a_model(workspace: Workspace, clock: FakeClock) -> None:
    note = end_session(workspace, conversation(), clock=clock)
    assert note is not None
    assert note.path == "memory/2026-11-22-1030.md"
    assert note.slug_method == "time"


def test_model_failure_falls_back_to_the_time(workspace: Workspace, clock: FakeClock) -> None:
    model = ScriptedChatModel([ChatModelError("down")])
    note = end_session(workspace, conversation(), model=model, clock=clock)
    assert note is not None
    assert note.path == "memory/2026-11-22-1030.md"
    unusable = ScriptedChatModel([json.dumps({"slug": "!!!"})])
    second = end_session(workspace, conversation(), model=unusable, clock=clock)
    assert second is not None
    assert second.slug_method == "time"


def test_existing_notes_are_never_overwritten(workspace: Workspace, clock: FakeClock) -> None:
    paths = []
    for _ in range(3):
        note = end_session(workspace, conversation(), clock=clock)
        assert note is not None
        paths.append(note.path)
    assert paths == [
        "memory/2026-11-22-1030.md",
        "memory/2026-11-22-1030-2.md",
        "memory/2026-11-22-1030-3.md",
    ]
    (workspace.root / paths[0]).write_text("edited by hand\n")
    end_session(workspace, conversation(), clock=clock)
    assert (workspace.root / paths[0]).read_text() == "edited by hand\n"


def test_only_the_last_n_messages_and_multiline_bullets(
    workspace: Workspace, clock: FakeClock
) -> None:
    messages = [Message("user", f"message {i}") for i in range(20)]
    messages.append(Message("assistant", "line one\nline two"))
    note = end_session(workspace, messages, count=3, clock=clock)
    assert note is not None
    text = (workspace.root / note.path).read_text()
    assert "message 17" not in text
    assert "- **user**: message 18\n- **user**: message 19\n" in text
    assert "- **assistant**: line one\n  line two\n" in text


def test_empty_conversation_writes_nothing(workspace: Workspace, clock: FakeClock) -> None:
    assert end_session(workspace, [Message("system", "x")], clock=clock) is None
    assert not workspace.memory_dir.exists()


@pytest.mark.parametrize(
    ("raw", "slug"),
    [
        ("Deploy Schedule", "deploy-schedule"),
        ("  ../etc/passwd ", "etc-passwd"),
        ("one two three", "one-two"),
        ("Über größe", "ber-gr"),
        ("", ""),
    ],
)
def test_sanitise_slug(raw: str, slug: str) -> None:
    assert sanitise_slug(raw) == slug
