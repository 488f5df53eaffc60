"""Facts and curation commands through the CLI runner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memdir.context import Session
from memdir.interfaces.cli import app
from memdir.llm import Message

runner = CliRunner()


def run(home: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--home", str(home), "--set", "embeddings.provider=hash", *args])
    return result.exit_code, result.stdout, result.stderr


def test_save_recall_supersede_forget(home: Path) -> None:
    assert run(home, "save", "My cat's name is Whiskerino")[0] == 0
    code, out, _ = run(home, "recall", "what is my cat called?", "--json")
    assert code == 0
    first = json.loads(out)[0]["fact"]
    assert "Whiskerino" in first["text"]
    assert run(home, "save", "My cat is now called Luna")[0] == 0
    code, out, _ = run(home, "recall", "what is my cat called?", "--json")
    assert [r["fact"]["text"] for r in json.loads(out)] == ["My cat is now called Luna"]
    code, out, _ = run(home, "recall", "cat called", "--as-of", first["valid_from"], "--json")
    assert [r["fact"]["text"] for r in json.loads(out)] == ["My cat's name is Whiskerino"]
    code, out, _ = run(home, "forget", "--query", "cat Luna", "--reason", "no cat any more")
    assert code == 0
    assert "Retired" in out
    code, out, _ = run(home, "recall", "what is my cat called?")
    assert "No saved facts" in out
    code, out, _ = run(home, "facts", "list", "--all", "--json")
    assert len(json.loads(out)) == 2
    note = next((home / "workspace" / "memory").glob("*.md")).read_text(encoding="utf-8")
    assert "no cat any more" in note


def test_secret_is_refused_and_nothing_written(home: Path) -> None:
    code, _, err = run(home, "save", "the token is ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    assert code == 1
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in err
    assert not list((home / "workspace" / "memory").glob("*.md"))


def test_forget_needs_exactly_one_target(home: Path) -> None:
    code, _, err = run(home, "forget", "--reason", "x")
    assert code != 0
    assert "--id or --query" in err


def test_extract_session_end_and_consolidate_without_a_model(home: Path) -> None:
    session = Session(home, "s1")
    talk = [
        ("user", "Hello there, I want to plan the billing migration."),
        ("assistant", "Sure. What do you have in mind?"),
        ("user", "Remember that we decided to use PostgreSQL for billing."),
        ("assistant", "Noted: PostgreSQL for billing."),
        ("user", "Also my favourite editor is Helix, keep that in mind."),
    ]
    session.extend([Message(role, text) for role, text in talk])
    code, out, _ = run(home, "session", "list")
    assert code == 0
    assert "s1" in out
    code, out, _ = run(home, "extract", "s1", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["ran"] is True
    assert result["facts_saved"] >= 1
    code, out, _ = run(home, "recall", "which database for billing?")
    assert "PostgreSQL" in out
    code, out, _ = run(home, "session", "end", "s1")
    assert code == 0
    written = out.split()[-1]
    assert (home / "workspace" / written).is_file()
    code, out, _ = run(home, "consolidate", "--dry-run")
    assert code == 0
    assert "dry run" in out
    assert not (home / "workspace" / "MEMORY.md").exists() or "PostgreSQL" not in (
        home / "workspace" / "MEMORY.md"
    ).read_text(encoding="utf-8")


def test_extract_unknown_session_is_a_clear_error(home: Path) -> None:
    code, _, err = run(home, "extract", "nope")
    assert code == 1
    assert "memdir session list" in err
