"""The system prompt through the CLI: session kinds, prompt.toml, recent notes, skills,
the first-run ritual and the context report's fields."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from typer.testing import CliRunner

from memdir.interfaces.cli import app
from memdir.tools import TOOLS

runner = CliRunner()
SKILL = """---
name: release-notes
description: Write release notes from the merged pull requests of a milestone.
---
# Release notes

1. List the merged pull requests.
"""


def run(home: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["--home", str(home), "--set", "embeddings.provider=hash", *args])
    return result.exit_code, result.stdout + result.stderr


def context(home: Path, *args: str) -> dict[str, object]:
    code, out = run(home, *args, "context", "--json")
    assert code == 0, out
    report: dict[str, object] = json.loads(out)
    return report


def rows(report: dict[str, object]) -> dict[str, dict[str, object]]:
    files = report["files"]
    assert isinstance(files, list)
    return {row["name"]: row for row in files}


def seeded(home: Path) -> Path:
    assert run(home, "init")[0] == 0
    root = home / "workspace"
    (root / "MEMORY.md").write_text("# MEMORY\n\n- The user's PIN hint is the cat's birthday.\n")
    user = (root / "USER.md").read_text(encoding="utf-8")
    (root / "USER.md").write_text(user + "\n## Health (private)\n\n- Allergic to penicillin.\n")
    return root


def test_session_kind_leaves_private_memory_out(home: Path) -> None:
    seeded(home)
    code, private = run(home, "prompt")
    assert code == 0
    assert "PIN hint" in private
    assert "penicillin" in private
    code, group = run(home, "prompt", "--session-kind", "group")
    assert code == 0
    assert "PIN hint" not in group
    assert "penicillin" not in group
    assert "# Session: group" in group
    report = context(home, "--set", "prompt.session_kind=shared")
    assert report["session_kind"] == "shared"
    assert rows(report)["MEMORY.md"]["status"] == "EXCLUDED"
    assert "private line(s) left out" in str(rows(report)["USER.md"]["note"])
    assert report["left_out"] == ["MEMORY.md"]
    code, out = run(home, "context", "--session-kind", "public")
    assert code == 1
    assert "unknown session kind 'public'; use private" in out


def test_prompt_files_switch_and_order_files(home: Path) -> None:
    root = seeded(home)
    (root / "notes").mkdir()
    (root / "notes" / "style.md").write_text("# Style\n\nWrite in British English.\n")
    code, out = run(home, "prompt-files", "set", "MEMORY.md", "--disable")
    assert code == 0, out
    code, out = run(home, "prompt-files", "set", "notes/style.md", "--enable", "--order", "15")
    assert code == 0, out
    settings = (root / "prompt.toml").read_text(encoding="utf-8")
    assert settings.startswith("# Which workspace files enter the system prompt")
    edited = settings.replace("sort_order = 15", "sort_order = 15  # right after AGENTS.md")
    (root / "prompt.toml").write_text(edited)  # a person edits it; memdir keeps the comment
    assert run(home, "prompt-files", "set", "TOOLS.md", "--order", "5")[0] == 0
    assert "# right after AGENTS.md" in (root / "prompt.toml").read_text(encoding="utf-8")
    code, prompt = run(home, "prompt")
    assert "PIN hint" not in prompt
    order = [prompt.index(f"## {name}") for name in
             ("TOOLS.md", "AGENTS.md", "notes/style.md", "SOUL.md", "USER.md")]  # fmt: skip
    assert order == sorted(order)
    report = rows(context(home))
    assert (report["MEMORY.md"]["status"], report["MEMORY.md"]["enabled"]) == ("DISABLED", False)
    assert report["notes/style.md"]["sort_order"] == 15
    code, out = run(home, "prompt-files", "list", "--json")
    listed = {item["path"]: item for item in json.loads(out)}
    assert listed["notes/style.md"]["origin"] == "global"
    code, out = run(home, "prompt-files", "set", "../outside.md", "--enable")
    assert code == 1
    assert "invalid workspace path" in out
    code, out = run(home, "prompt-files", "set", "MEMORY.md")
    assert code != 0
    assert "--enable, --disable and/or --order" in out


def test_an_agent_overrides_the_global_prompt_toml(home: Path) -> None:
    seeded(home)
    assert run(home, "prompt-files", "set", "TOOLS.md", "--disable")[0] == 0
    assert run(home, "--agent", "coder", "init")[0] == 0
    assert rows(context(home, "--agent", "coder"))["TOOLS.md"]["status"] == "DISABLED"
    assert run(home, "--agent", "coder", "prompt-files", "set", "TOOLS.md", "--enable")[0] == 0
    assert rows(context(home, "--agent", "coder"))["TOOLS.md"]["status"] == "OK"
    assert rows(context(home))["TOOLS.md"]["status"] == "DISABLED"


def test_recent_daily_notes_enter_the_prompt(home: Path) -> None:
    root = seeded(home)
    today = dt.date.today()
    for back, text in ((0, "- Shipped the parser."), (1, "- Planned the parser."),
                       (2, "- Three days ago.")):  # fmt: skip
        day = (today - dt.timedelta(days=back)).isoformat()
        (root / "memory" / f"{day}.md").write_text(f"# {day}\n\n{text}\n")
    _code, prompt = run(home, "prompt")
    assert prompt.index("Shipped the parser.") < prompt.index("Planned the parser.")
    assert "Three days ago." not in prompt
    report = context(home)
    notes = report["recent_notes"]
    assert isinstance(notes, list)
    assert [n["name"] for n in notes] == [
        f"memory/{today}.md",
        f"memory/{today - dt.timedelta(days=1)}.md",
    ]
    _, prompt = run(home, "--set", "prompt.recent_notes_days=0", "prompt")
    assert "Shipped the parser." not in prompt


def test_skills_are_listed_denied_and_counted(home: Path) -> None:
    root = seeded(home)
    for name, text in (("release-notes", SKILL), ("triage", "# Triage\n\nSort new issues.\n")):
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(text)
    code, prompt = run(home, "prompt")
    skills = prompt.split("# Skills", 1)[1]
    assert "- release-notes: Write release notes from the merged pull requests" in skills
    assert "(skills/release-notes/SKILL.md)" in skills
    assert "- triage: Triage (skills/triage/SKILL.md)" in skills
    assert "- memory-review: Review the last week of daily notes" in skills  # seeded by init
    report = context(home)
    assert report["skills"] == 3
    assert report["workspace"] == str(root)
    assert report["tools"] == len(TOOLS)  # every tool the tool table defines
    denied = context(home, "--set", "prompt.skills_deny=triage")
    assert denied["skills"] == 2
    assert run(home, "--agent", "coder", "init")[0] == 0
    code, out = run(home, "--agent", "coder", "files", "read", "skills/triage/SKILL.md")
    assert code == 0
    assert "Sort new issues." in out  # an agent reads the global skills it is shown


def test_prompt_carries_bootstrap_until_the_ritual_is_finished(home: Path) -> None:
    assert run(home, "init")[0] == 0
    code, prompt = run(home, "prompt")
    assert "## BOOTSTRAP.md" in prompt
    assert "call memory_finish_ritual" in prompt
    assert rows(context(home))["BOOTSTRAP.md"]["sort_order"] == 0
    assert "under way" in run(home, "ritual", "status")[1]
    code, out = run(home, "ritual", "finish")
    assert (code, out.strip()) == (0, "first-run ritual finished: BOOTSTRAP.md deleted")
    assert not (home / "workspace" / "BOOTSTRAP.md").exists()
    code, prompt = run(home, "prompt")
    assert "BOOTSTRAP.md" not in rows(context(home))
    assert "first conversation in this workspace" not in prompt
    assert "no first-run ritual to finish" in run(home, "ritual", "finish")[1]
    assert run(home, "--agent", "coder", "init")[0] == 0
    code, prompt = run(home, "--agent", "coder", "prompt")
    assert "your first run as coder" in prompt  # each new agent gets a ritual of its own


def test_lowercase_memory_md_is_read_and_indexed(home: Path) -> None:
    root = seeded(home)
    (root / "MEMORY.md").unlink()
    (root / "memory.md").write_text("# memory\n\n- The staging database is called heron.\n")
    code, prompt = run(home, "prompt")
    assert "## memory.md" in prompt
    assert "called heron" in prompt
    code, out = run(home, "search", "staging database heron")
    assert code == 0
    assert "memory.md:" in out


def test_notes_in_any_folder_are_indexed_and_skills_only_on_request(home: Path) -> None:
    root = seeded(home)
    (root / "projects" / "billing").mkdir(parents=True)
    (root / "projects" / "billing" / "plan.md").write_text("# Plan\n\nMigrate invoices to Rust.\n")
    (root / "skills" / "deploy").mkdir(parents=True)
    (root / "skills" / "deploy" / "SKILL.md").write_text("# Deploy\n\nRun the canary first.\n")
    code, out = run(home, "search", "invoices Rust")
    assert code == 0
    assert "projects/billing/plan.md:" in out
    code, out = run(home, "search", "canary deploy", "--min-score", "0")
    assert "SKILL.md" not in out
    code, out = run(home, "--set", "index.extra_paths=skills", "search", "canary deploy")
    assert code == 0
    assert "skills/deploy/SKILL.md:" in out
    code, out = run(home, "--set", 'index.extra_paths=["/etc"]', "search", "x")
    assert code == 1
    assert "index.extra_paths holds '/etc'" in out


def test_search_all_syncs_every_agent_first(home: Path) -> None:
    seeded(home)
    assert run(home, "search", "anything")[0] == 0  # the index exists and is synced
    assert run(home, "--agent", "writer", "init")[0] == 0
    note = home / "agents" / "writer" / "memory" / f"{dt.date.today()}.md"
    note.write_text("# Notes\n\n- The heroine is called Marisol Quintero.\n")
    code, out = run(home, "--set", "search.cross_agent=true", "search", "Marisol Quintero heroine",
                    "--scope", "all", "--json")  # fmt: skip
    assert code == 0, out
    hits = json.loads(out)["hits"]
    assert hits
    assert hits[0]["source"] == "agent:writer"
