"""Consolidation ("emergence"): daily notes into MEMORY.md, with and without a model."""

from __future__ import annotations

import datetime as dt
import json

from curate_support import FakeClock

from memdir.curate import consolidate, promote_heuristically
from memdir.curate.consolidation import read_recent_notes
from memdir.llm import ScriptedChatModel
from memdir.progress import ProgressUpdate
from memdir.workspace import Workspace

TODAY = dt.date(2026, 11, 22)
MEMORY = "# MEMORY\n\n- Alice owns billing\n- Staging is staging.example.org\n"


def _note(workspace: Workspace, day: dt.date, text: str) -> None:
    workspace.memory_dir.mkdir(parents=True, exist_ok=True)
    (workspace.memory_dir / f"{day.isoformat()}.md").write_text(f"# {day}\n\n{text}")


def _seed(workspace: Workspace) -> None:
    (workspace.root / "MEMORY.md").write_text(MEMORY)
    _note(workspace, TODAY - dt.timedelta(days=2), "- Tests run with pytest -q\n- lunch was late\n")
    _note(
        workspace,
        TODAY - dt.timedelta(days=1),
        "- tests run with **pytest -q**.\n"
        "- We decided to ship on Fridays\n"
        "- Tabs over spaces <!-- memdir:fact id=f-aaaaaaaaaa cat=preference imp=5 at=x -->\n"
        "- Alice owns billing\n"
        "- Is the build green?\n",
    )
    _note(workspace, TODAY - dt.timedelta(days=9), "- Old: we decided on Jenkins\n")
    _note(workspace, TODAY, "- Forgot: x (reason: y) <!-- memdir:forget id=f-bbbbbbbbbb at=x -->\n")


def test_recent_notes_are_the_last_n_days(workspace: Workspace) -> None:
    _seed(workspace)
    notes = read_recent_notes(workspace, 7, TODAY)
    assert [n.path for n in notes] == [
        "memory/2026-11-20.md",
        "memory/2026-11-21.md",
        "memory/2026-11-22.md",
    ]


def test_heuristic_promotes_recurring_and_marked_lines(workspace: Workspace) -> None:
    _seed(workspace)
    notes = read_recent_notes(workspace, 7, TODAY)
    promoted = promote_heuristically(notes, MEMORY)
    assert promoted == [
        "Tests run with pytest -q",  # on two days
        "We decided to ship on Fridays",  # a decision
        "Tabs over spaces",  # a preference fact marker
    ]
    # not: one-off lines, lines already in MEMORY.md, questions, forgets, notes older than 7 days


def test_dry_run_shows_the_diff_and_writes_nothing(workspace: Workspace, clock: FakeClock) -> None:
    _seed(workspace)
    seen: list[ProgressUpdate] = []
    result = consolidate(workspace, today=TODAY, dry_run=True, clock=clock, progress=seen.append)
    assert [(u.stage, u.done) for u in seen] == [("reading daily notes", len(result.notes))]
    assert result.method == "heuristic"
    assert result.update is not None
    assert result.update.status == "dry_run"
    assert "+## Consolidated 2026-11-22" in result.diff
    assert "+- Tests run with pytest -q" in result.diff
    assert result.diff.startswith("--- a/MEMORY.md\n+++ b/MEMORY.md\n")
    assert (workspace.root / "MEMORY.md").read_text() == MEMORY
    assert not (workspace.root / ".history").exists()
    assert not result.written


def test_heuristic_consolidation_writes_with_history(
    workspace: Workspace, clock: FakeClock
) -> None:
    _seed(workspace)
    result = consolidate(workspace, today=TODAY, clock=clock)
    assert result.written
    text = (workspace.root / "MEMORY.md").read_text()
    assert text == (
        MEMORY + "\n## Consolidated 2026-11-22\n- Tests run with pytest -q\n"
        "- We decided to ship on Fridays\n- Tabs over spaces\n"
    )
    assert result.update is not None
    assert result.update.history is not None
    assert (workspace.root / result.update.history).read_text() == MEMORY
    again = consolidate(workspace, today=TODAY, clock=clock)
    assert again.added == ()
    assert again.update is None  # nothing new: no rewrite, no diff
    assert again.diff == ""


def test_model_plan_adds_and_merges(workspace: Workspace, clock: FakeClock) -> None:
    _seed(workspace)
    memory = MEMORY + "- Bob is on call\n- Bob handles on-call\n- CI uses GitHub Actions\n"
    (workspace.root / "MEMORY.md").write_text(memory)
    plan = {
        "entries_to_add": ["Deploys ship on Fridays", "Alice owns billing"],
        "merges": [
            {"replace": ["Bob is on call", "Bob handles on-call"], "merged": "Bob is on call"}
        ],
    }
    model = ScriptedChatModel([json.dumps(plan)])
    result = consolidate(workspace, model=model, today=TODAY, clock=clock)
    assert result.method == "model"
    assert result.added == ("Deploys ship on Fridays",)  # Alice is known already
    assert result.merged == 1
    text = (workspace.root / "MEMORY.md").read_text()
    assert text.count("Bob") == 1
    assert "- Deploys ship on Fridays" in text
    prompt = model.calls[0].messages[-1].content
    assert "## memory/2026-11-21.md" in prompt
    assert "Old: we decided on Jenkins" not in prompt


def test_model_plan_that_loses_too_much_is_refused(workspace: Workspace, clock: FakeClock) -> None:
    (workspace.root / "MEMORY.md").write_text("- a one\n- b two\n- c three\n- d four\n")
    plan = {"merges": [{"replace": ["a one", "b two", "c three"], "merged": "abc"}]}
    result = consolidate(
        workspace, model=ScriptedChatModel([json.dumps(plan)]), today=TODAY, clock=clock
    )
    assert result.update is not None
    assert result.update.status == "refused"
    assert (workspace.root / "MEMORY.md").read_text() == "- a one\n- b two\n- c three\n- d four\n"


def test_model_failure_falls_back_to_the_heuristic(workspace: Workspace, clock: FakeClock) -> None:
    _seed(workspace)
    model = ScriptedChatModel(["nope", "still nope"])
    result = consolidate(workspace, model=model, today=TODAY, clock=clock)
    assert result.method == "heuristic"
    assert result.error is not None
    assert "ConsolidationPlan" in result.error
    heuristic = consolidate(workspace, model=None, today=TODAY, clock=clock, dry_run=True)
    assert result.added
    assert heuristic.added == ()  # the fallback already promoted what the heuristic finds
    assert "ship on Fridays" in (workspace.root / "MEMORY.md").read_text()
