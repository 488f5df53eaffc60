"""The CLI as people use it: global options after the command, readable output, CLI errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.interfaces.cli import app

runner = CliRunner()
FAST = ["--set", "embeddings.provider=hash"]


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def seeded(home: Path) -> Path:
    assert run("--home", str(home), *FAST, "init")[0] == 0
    note = home / "workspace" / "memory" / "2026-01-05.md"
    note.write_text("# Monday\n\n- Chose PostgreSQL for billing.\n- Lunch was soup.\n", "utf-8")
    return home


@pytest.mark.parametrize("where", ["before", "after"])
def test_agent_and_home_go_before_or_after_the_command(home: Path, where: str) -> None:
    options = ["--home", str(home), "--agent", "coder", *FAST]
    command = ["init", "--name", "Coder", "--description", "writes code"]
    args = [*options, *command] if where == "before" else [*command, *options]
    code, out, err = run(*args)
    assert code == 0, err
    soul = home / "agents" / "coder" / "SOUL.md"
    assert "Coder" in soul.read_text(encoding="utf-8")
    assert str(home / "agents" / "coder") in out


def test_options_after_a_nested_command(seeded: Path) -> None:
    code, out, _ = run("files", "list", "--home", str(seeded), "--json")
    assert code == 0
    assert "memory/2026-01-05.md" in json.loads(out)


def test_an_option_after_the_command_wins_over_the_same_before(
    seeded: Path, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    code, out, _ = run("--home", str(other), "files", "list", "--home", str(seeded), "--json")
    assert code == 0
    assert "memory/2026-01-05.md" in json.loads(out)


def test_get_prints_numbered_lines_and_json(seeded: Path) -> None:
    code, out, err = run("--home", str(seeded), "get", "memory/2026-01-05.md", "--from", "3")
    assert code == 0
    assert out.splitlines() == ["3\t- Chose PostgreSQL for billing.", "4\t- Lunch was soup."]
    assert "lines 3-4 of 4" in err  # the range goes to stderr, the lines alone to stdout
    code, out, _ = run("--home", str(seeded), "get", "memory/2026-01-05.md", "--lines", "1",
                       "--json")  # fmt: skip
    data = json.loads(out)
    assert data["start_line"] == 1
    assert data["end_line"] == 1
    assert data["total_lines"] == 4
    assert data["content"] == "# Monday"


def test_index_status_prints_values_not_reprs(seeded: Path) -> None:
    assert run("--home", str(seeded), *FAST, "index", "sync")[0] == 0
    code, out, _ = run("--home", str(seeded), *FAST, "index", "status")
    assert code == 0
    assert "Identity(" not in out
    assert "{" not in out
    assert "embedder" in out
    assert "hash" in out
    files = next(line for line in out.splitlines() if line.startswith("files "))
    # the note and the two seeded profile files (USER.md, TOOLS.md)
    assert files.split()[-1] == "3"


def test_search_json_hits_carry_their_citation(seeded: Path) -> None:
    code, out, _ = run("--home", str(seeded), *FAST, "search", "billing database", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["query"] == "billing database"
    hit = data["hits"][0]
    assert hit["citation"] == f"{hit['path']}:{hit['start_line']}-{hit['end_line']}"


@pytest.mark.parametrize("value", ["0", "-1", "101"])
def test_max_results_out_of_range_names_the_flag(seeded: Path, value: str) -> None:
    code, out, err = run("--home", str(seeded), *FAST, "search", "billing", "-n", value)
    assert code == 2
    assert "--max-results" in err
    assert out == ""


def test_errors_name_cli_commands_not_tools(seeded: Path) -> None:
    home = ["--home", str(seeded), *FAST]
    code, _, err = run(*home, "get", "memory/nope.md")
    assert code == 1
    assert "`memdir files list`" in err
    assert "memory_" not in err
    code, _, err = run(*home, "files", "edit", "memory/2026-01-05.md", "--old", "cocoa",
                       "--new", "tea")  # fmt: skip
    assert code == 1
    assert "`memdir files read PATH`" in err
    assert "memory_" not in err
    code, _, err = run(*home, "files", "edit", "memory/2026-01-05.md", "--old", "-", "--new", "*")
    assert code == 1
    assert "pass --all" in err
    assert "replace_all" not in err
    code, _, err = run(*home, "forget", "--id", "f-0123456789", "--reason", "wrong")
    assert code == 1
    assert "`memdir recall" in err
    assert "memory_" not in err


def test_bench_locomo_with_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run("bench", "locomo", "--data", str(tmp_path / "locomo.json"))
    assert code == 2
    assert "--data" in err
    assert "does not exist" in err
    assert "Traceback" not in err


def test_a_fresh_home_logs_no_index_warning(home: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert run("--home", str(home), *FAST, "init")[0] == 0
    code, out, err = run("--home", str(home), *FAST, "search", "anything")
    assert code == 0
    assert "no memory files indexed yet" in out
    assert "older memdir" not in err + caplog.text


def test_recent_shows_written_files_and_saved_facts(seeded: Path) -> None:
    home = ["--home", str(seeded), *FAST]
    assert run(*home, "save", "The office plant is a fern.")[0] == 0
    code, out, _ = run(*home, "recent", "--days", "1")
    assert code == 0
    assert "memory/2026-01-05.md" in out
    assert "saved" in out
    assert "The office plant is a fern." in out
    code, out, _ = run(*home, "recent", "--json", "--limit", "1")
    data = json.loads(out)
    assert len(data["files"]) == 1
    assert data["more_files"] >= 1
    assert data["facts"][0]["kind"] == "saved"
