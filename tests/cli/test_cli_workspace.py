"""The CLI through its real entry point (typer's runner on the click command)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.interfaces.cli import app

runner = CliRunner()
FAST = ["--set", "embeddings.provider=hash"]


def run(home: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--home", str(home), *FAST, *args], input=input)
    return result.exit_code, result.stdout, result.stderr


def test_init_seeds_once_and_keeps_edits(home: Path) -> None:
    code, out, _ = run(home, "init")
    assert code == 0
    assert "created AGENTS.md" in out
    soul = home / "workspace" / "SOUL.md"
    soul.write_text("my own soul\n", encoding="utf-8")
    code, out, _ = run(home, "init")
    assert code == 0
    assert "nothing to create" in out
    assert soul.read_text(encoding="utf-8") == "my own soul\n"


def test_agent_init_personalises_soul(home: Path) -> None:
    code, _, _ = run(
        home, "--agent", "coder", "init", "--name", "Coder", "--description", "reviews"
    )
    assert code == 0
    soul = (home / "agents" / "coder" / "SOUL.md").read_text(encoding="utf-8")
    assert "Coder" in soul
    assert "reviews" in soul


def test_files_write_read_edit_get(home: Path) -> None:
    assert run(home, "files", "write", "notes/a.md", "--content", "alpha\nbeta\nbeta\n")[0] == 0
    assert run(home, "files", "read", "notes/a.md")[1] == "alpha\nbeta\nbeta\n"
    code, _, err = run(home, "files", "edit", "notes/a.md", "--old", "beta", "--new", "gamma")
    assert code == 1
    assert "beta" in err
    code, out, _ = run(home, "files", "edit", "notes/a.md", "--old", "beta", "--new", "g", "--all")
    assert code == 0
    assert "replaced 2 occurrences" in out
    code, out, _ = run(home, "get", "notes/a.md", "--from", "2", "--lines", "1")
    assert code == 0
    assert "2" in out
    assert "g" in out
    assert "alpha" not in out
    code, out, _ = run(home, "files", "list", "--json")
    assert "notes/a.md" in json.loads(out)


@pytest.mark.parametrize("path", ["../escape.md", "/etc/passwd.md", "a.txt", "a\x00.md"])
def test_hostile_paths_are_one_line_errors(home: Path, path: str) -> None:
    code, out, err = run(home, "files", "write", path, "--content", "x")
    assert code == 1
    assert "Traceback" not in out + err
    assert err.strip().startswith("Error:")
    assert not (home.parent / "escape.md").exists()


def test_context_table_and_json(home: Path) -> None:
    code, _, err = run(home, "context")
    assert code == 1
    assert "is not a memdir home" in err
    assert "memdir init" in err
    assert not home.exists()  # a read never creates the home
    run(home, "init")
    code, out, _ = run(home, "context")
    assert code == 0
    assert "AGENTS.md" in out
    code, out, _ = run(home, "context", "--json")
    data = json.loads(out)
    names = [f["name"] for f in data["files"]]
    assert names[names.index("AGENTS.md") :][:2] == ["AGENTS.md", "SOUL.md"]


def test_prompt_contains_sections(home: Path) -> None:
    run(home, "init")
    code, out, _ = run(home, "prompt")
    assert code == 0
    assert "## AGENTS.md" in out
    assert "memory_search" in out


def test_config_show_names_origins(home: Path) -> None:
    code, out, _ = run(home, "--set", "search.max_results=3", "config", "show", "--json")
    assert code == 0
    rows = {r["key"]: r for r in json.loads(out)["settings"]}
    assert rows["search.max_results"] == {"key": "search.max_results", "value": 3, "origin": "flag"}
    assert rows["embeddings.provider"]["origin"] == "flag"
    assert rows["index.tokenizer"]["origin"] == "default"


def test_bad_setting_is_one_line(home: Path) -> None:
    code, _, err = run(home, "--set", "search.max_results=lots", "config", "show")
    assert code == 1
    assert "search.max_results" in err
    assert "Traceback" not in err


def test_installed_script_runs(home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", "--home", str(home), *FAST, "files", "read", "../x.md"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1
