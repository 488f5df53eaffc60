"""Learnings: tool errors and corrections, appended under a lock and fed to the prompt."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from curate_support import NOW, FakeClock

from memdir.curate import (
    detect_correction,
    learnings_for_prompt,
    record_correction,
    record_tool_error,
)
from memdir.errors import ChatModelError, InvalidInputError
from memdir.llm import ScriptedChatModel
from memdir.workspace import Workspace


def test_tool_error_is_appended_with_heading(workspace: Workspace, clock: FakeClock) -> None:
    where = record_tool_error(
        workspace,
        "memory_search",
        {"query": "deploy", "api_key": "sk-secret"},
        ValueError("bad query"),
        "searching for the deploy day",
        clock=clock,
    )
    text = (workspace.root / "learnings/errors.md").read_text()
    assert text.startswith("# Tool errors\n")
    assert "## 2026-11-22T10:30:00+00:00 · tool `memory_search`" in text
    assert "- **Error**: ValueError: bad query" in text
    assert '"api_key": "***"' in text
    assert "sk-secret" not in text
    assert "- **Context**: searching for the deploy day" in text
    lines = text.splitlines()
    assert lines[where.start_line - 1].startswith("## 2026-11-22")
    assert where.end_line == len(lines)


def test_correction_is_appended(workspace: Workspace, clock: FakeClock) -> None:
    record_correction(
        workspace, "Use tabs, not spaces", "formatting", wrong="used spaces", clock=clock
    )
    clock.now = NOW + timedelta(minutes=1)
    record_correction(workspace, "Deploys are on Fridays", clock=clock)
    text = (workspace.root / "learnings/corrections.md").read_text()
    assert text.startswith("# Corrections\n")
    assert text.count("## 2026-11-22") == 2
    assert "- **Wrong**: used spaces" in text
    assert text.index("Use tabs") < text.index("Deploys are on Fridays")


def test_concurrent_appends_lose_nothing(workspace: Workspace) -> None:
    def write(n: int) -> None:
        for i in range(10):
            record_correction(workspace, f"correction {n}-{i}")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    text = (workspace.root / "learnings/corrections.md").read_text()
    assert text.count("# Corrections") == 1
    assert all(f"correction {n}-{i}\n" in text for n in range(4) for i in range(10))


def test_learnings_for_prompt_newest_first_within_budget(
    workspace: Workspace, clock: FakeClock
) -> None:
    assert learnings_for_prompt(workspace, 1000) == ""
    record_tool_error(workspace, "memory_get", {"path": "x.md"}, "not found", clock=clock)
    clock.now = NOW + timedelta(hours=1)
    record_correction(workspace, "Deploys are on Fridays", clock=clock)
    clock.now = NOW + timedelta(hours=2)
    record_tool_error(workspace, "memory_search", {}, "timeout", "big query", clock=clock)
    full = learnings_for_prompt(workspace, 10_000)
    assert full.splitlines() == [
        "- [2026-11-22] Tool memory_search: failed with timeout (context: big query)",
        "- [2026-11-22] Deploys are on Fridays",
        "- [2026-11-22] Tool memory_get: failed with not found",
    ]
    budget = len(full.splitlines()[0]) + 1 + len(full.splitlines()[1])
    assert learnings_for_prompt(workspace, budget).splitlines() == full.splitlines()[:2]
    assert learnings_for_prompt(workspace, budget - 1).splitlines() == full.splitlines()[:1]
    assert learnings_for_prompt(workspace, 10) == ""
    with pytest.raises(InvalidInputError):
        learnings_for_prompt(workspace, -1)


def test_bad_arguments_are_refused(workspace: Workspace) -> None:
    with pytest.raises(InvalidInputError):
        record_tool_error(workspace, "", {}, "x")
    with pytest.raises(InvalidInputError):
        record_correction(workspace, "   ")


@pytest.mark.parametrize(
    "text",
    [
        "No, the deploy is on Friday.",
        "That's wrong, it is port 8080.",
        "that is not what I asked for",
        "Actually, use the staging database.",
        "I said tabs, not spaces.",
        "Don't commit to main directly.",
        "It's not Tuesday but Wednesday.",
    ],
)
def test_detect_correction_cases(text: str) -> None:
    assert detect_correction(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "No problem, thanks!",
        "Can you deploy it on Friday?",
        "Great, that works.",
        "no",
        "Tell me more about the notes.",
    ],
)
def test_detect_correction_non_cases(text: str) -> None:
    assert detect_correction(text) is None


def test_detect_correction_with_a_model() -> None:
    model = ScriptedChatModel(
        [
            json.dumps({"is_correction": True, "correction": "Use port 8080"}),
            json.dumps({"is_correction": False}),
            ChatModelError("down"),
        ]
    )
    assert detect_correction("hmm, 8080 please", model) == "Use port 8080"
    assert detect_correction("No, the deploy is on Friday.", model) is None  # the model rules
    assert detect_correction("No, the deploy is on Friday.", model) == (
        "No, the deploy is on Friday."  # the model failed: the heuristic answers
    )
