"""``curate.review = true``: consolidation and extraction propose their rewrites of
MEMORY.md (and USER.md); a person shows, accepts (a version) or rejects them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.cli import app
from memdir.llm import Message, ScriptedChatModel
from memdir.memory import Memory

runner = CliRunner()
REVIEW = ["--set", "embeddings.provider=hash", "--set", "curate.review=true"]
MEMORY = "# Memory\n\n- Deploys run on Fridays.\n"


def run(home: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--home", str(home), *REVIEW, *args])
    return result.exit_code, result.stdout, result.stderr


def proposals(home: Path) -> list[dict[str, str]]:
    code, out, _ = run(home, "proposals", "--json")
    assert code == 0
    found: list[dict[str, str]] = json.loads(out)
    return found


def consolidate_for_review(home: Path) -> str:
    run(home, "init")
    run(home, "save", "We decided to use PostgreSQL for billing.")
    run(home, "save", "The user's favourite editor is Helix.")
    run(home, "files", "write", "MEMORY.md", "--content", MEMORY)
    code, out, _ = run(home, "consolidate")
    assert code == 0
    assert "written: False" in out
    (waiting,) = proposals(home)
    assert f"proposed for review: {waiting['id']}" in out
    assert (home / "workspace" / "MEMORY.md").read_text() == MEMORY  # nothing applied
    return waiting["id"]


def test_a_consolidation_under_review_is_a_proposal_shown_as_a_diff_and_accepted(
    home: Path,
) -> None:
    proposal = consolidate_for_review(home)
    code, out, _ = run(home, "proposals")
    assert f"{proposal}" in out
    assert "global workspace  consolidate  MEMORY.md" in out
    code, out, _ = run(home, "proposals", "show", proposal)
    assert code == 0
    assert out.startswith("--- a/MEMORY.md\n+++ b/MEMORY.md\n")
    assert "+- We decided to use PostgreSQL for billing.\n" in out
    assert "+- The user's favourite editor is Helix.\n" in out
    code, out, err = run(home, "proposals", "accept", proposal)
    assert code == 0, err
    text = (home / "workspace" / "MEMORY.md").read_text()
    assert text.startswith(MEMORY)
    assert "- We decided to use PostgreSQL for billing." in text
    assert proposals(home) == []
    code, out, _ = run(home, "history", "MEMORY.md", "--json")
    last = json.loads(out)["versions"][0]
    assert last["tool"] == "consolidate"
    assert last["reason"].startswith(f"accepted proposal {proposal} by ")
    assert "(memdir proposals accept): promoted 2 entries" in last["reason"]
    # the accepted proposal is a version like any other: undo takes it back
    code, _, _ = run(home, "undo", "MEMORY.md")
    assert code == 0
    assert (home / "workspace" / "MEMORY.md").read_text() == MEMORY


def test_a_proposal_over_a_changed_file_is_refused_then_rejected(home: Path) -> None:
    proposal = consolidate_for_review(home)
    changed = MEMORY + "- Backups run nightly.\n"
    run(home, "files", "write", "MEMORY.md", "--content", changed)
    code, _, err = run(home, "proposals", "accept", proposal)
    assert code == 1
    assert f"MEMORY.md changed since proposal {proposal} was made" in err
    assert f"memdir proposals reject {proposal}" in err
    assert (home / "workspace" / "MEMORY.md").read_text() == changed
    code, out, _ = run(home, "proposals", "reject", proposal)
    assert f"rejected {proposal}" in out
    assert code == 0
    assert proposals(home) == []
    assert (home / "workspace" / "MEMORY.md").read_text() == changed


def test_an_extraction_by_the_model_proposes_its_rewrite_and_its_appends(
    home: Path,
) -> None:
    (home).mkdir(parents=True)
    (home / "memdir.toml").write_text("[curate]\nreview = true\n")
    new = MEMORY.replace("Fridays", "Thursdays") + "- Alice owns billing.\n"
    reply = {
        "should_update": True,
        "reason": "the deploy day moved",
        "memory_update": new,
        "daily_entry": "- The deploy moved to Thursdays.",
    }
    model = ScriptedChatModel([json.dumps(reply)])
    with Memory.open(home, "coder", embedder=HashEmbedder(), chat_model=model) as memory:
        memory.init()
        memory.write_file("MEMORY.md", MEMORY)
        memory.session("s1").extend(
            [
                Message("user", "Hi, I need help with our deployment schedule."),
                Message("assistant", "Sure, what would you like to know about it?"),
                Message("user", "We moved it around a few times this month."),
                Message("assistant", "Understood. What is the schedule now?"),
                Message("user", "Please remember that the deploy runs on Thursdays now."),
            ]
        )
        result = memory.extract("s1")
        assert result.ran
        proposal, appends = result.proposals
        assert memory.read_file("MEMORY.md") == MEMORY  # proposed, not written
        assert result.memory is not None
        assert result.memory.status == "proposed"
        assert result.daily_entry is None  # the entry is proposed too
        assert not list((home / "agents/coder/memory").glob("*.md"))
    code, out, _ = run(home, "proposals")
    assert f"{appends}" in out
    assert "agent coder  extract  memory/" in out
    assert f"{proposal}" in out
    assert "agent coder  extract  MEMORY.md" in out
    code, out, err = run(home, "proposals", "accept", proposal)
    assert code == 0, err
    assert (home / "agents" / "coder" / "MEMORY.md").read_text() == new
    code, out, _ = run(home, "--agent", "coder", "history", "MEMORY.md", "--json")
    last = json.loads(out)["versions"][0]
    assert last["tool"] == "extract"
    assert last["agent"] == "coder"
    assert "extracted from session s1: the deploy day moved" in last["reason"]


class QuietDisplay:
    """What the chat shows, dropped: the test reads the memory."""

    def show_reply(self, text: str) -> None: ...
    def show_event(self, event: object) -> None: ...
    def show_notice(self, text: str) -> None: ...
    def show_error(self, text: str) -> None: ...
    def show_table(self, title: str, columns: object, rows: object) -> None: ...


def test_a_chats_background_extraction_proposes_its_rewrite(home: Path) -> None:
    from memdir.agent import ChatAgent, run_chat

    new = MEMORY + "- The release is on Friday.\n"
    reply = {"should_update": True, "reason": "a release date", "memory_update": new}
    curator = ScriptedChatModel([json.dumps(reply)])
    review = {"curate": {"review": True}}
    with Memory.open(home, embedder=HashEmbedder(), chat_model=curator, overrides=review) as memory:
        memory.init()
        memory.write_file("MEMORY.md", MEMORY)
        talk = ScriptedChatModel(["Nice to meet you.", "Tea it is.", "Noted."])
        with ChatAgent(memory, talk) as agent:
            said = iter(["Hello, I am new.", "I like green tea.", "The release is on Friday."])
            run_chat(agent, lambda: next(said, None), QuietDisplay())
        assert memory.read_file("MEMORY.md") == MEMORY  # proposed, not written
    (waiting,) = proposals(home)
    assert waiting["tool"] == "extract"
    assert waiting["content"] == new
    assert "a release date" in waiting["reason"]
