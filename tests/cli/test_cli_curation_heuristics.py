"""The no-model curation heuristics where a user meets them: `memdir save`, `recall` and
`consolidate` on updates and near-duplicates, and `memdir bench curation`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.interfaces.cli import app

runner = CliRunner()


def run(home: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["--home", str(home), "--set", "embeddings.provider=hash", *args])
    return result.exit_code, result.stdout + result.stderr


def current_texts(home: Path) -> list[str]:
    code, out = run(home, "facts", "list", "--json")
    assert code == 0, out
    return sorted(fact["text"] for fact in json.loads(out))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Staging runs in eu-west-1", "Staging now runs in us-east-2"),
        ("I prefer tabs for indentation", "I switched to spaces for indentation"),
        ("My manager is Carla", "My manager is now Dmitri"),
    ],
)
def test_an_update_leaves_one_current_fact(home: Path, old: str, new: str) -> None:
    assert run(home, "save", old)[0] == 0
    code, out = run(home, "save", new, "--json")
    assert code == 0, out
    assert json.loads(out)["action"] == "supersede"
    assert current_texts(home) == [new]


def test_a_near_duplicate_is_not_a_second_fact_nor_a_second_entry(home: Path) -> None:
    first = "We chose PostgreSQL for billing"
    fuller = "We chose PostgreSQL for the billing service"
    assert run(home, "save", first, "--category", "decision")[0] == 0
    code, out = run(home, "save", fuller, "--category", "decision", "--json")
    assert code == 0, out
    assert json.loads(out)["action"] == "update"  # the fuller statement replaces the first
    assert current_texts(home) == [fuller]
    code, out = run(home, "consolidate")
    assert code == 0, out
    memory = (home / "workspace" / "MEMORY.md").read_text(encoding="utf-8")
    assert memory.count("PostgreSQL") == 1
    assert f"- {fuller}" in memory


@pytest.mark.slow
def test_bench_curation_prints_the_figures() -> None:
    """Regression floors on the development part (docs/curation.md has the figures)."""
    result = runner.invoke(app, ["bench", "curation", "--embedder", "none"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["part"] == "development"
    assert figures["extraction"]["statements"] >= 100
    assert figures["updates"]["pairs"] >= 60
    assert figures["extraction"]["recall"] >= 0.95, figures["extraction"]["missed"]
    assert figures["extraction"]["precision"] >= 0.95, figures["extraction"]["false"]
    assert figures["extraction"]["mixed_person_facts"] == 0
    assert figures["updates"]["recall"] >= 0.9, figures["updates"]["missed"]
    assert figures["updates"]["false_supersessions"] == 0, figures["updates"]["false"]
    assert figures["duplicates"]["recall"] >= 0.75, figures["duplicates"]["missed"]
    assert figures["duplicates"]["distinct_merged"] == 0, figures["duplicates"]["false"]
    bad = runner.invoke(app, ["bench", "curation", "--embedder", "openai"])
    assert bad.exit_code == 2
    assert "use local or none" in bad.output
