"""``memdir bench reliability`` runs every attack class and reports zero wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.bench.crash import run_crash
from memdir.interfaces.cli import app


@pytest.mark.slow
def test_killed_appenders_lose_duplicate_and_tear_nothing(tmp_path: Path) -> None:
    counts = run_crash(tmp_path / "home", seconds=4, kill_every=0.2)
    assert counts.kills > 5
    assert counts.acknowledged > 50
    assert (counts.lost, counts.duplicated, counts.torn) == (0, 0, 0)


@pytest.mark.slow
def test_the_cli_runs_every_part(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["bench", "reliability", "--seconds", "3", "--workdir", str(tmp_path)]
    )
    figures = json.loads(result.stdout)
    assert result.exit_code == 0, figures
    assert set(figures) >= {
        "crash",
        "facts",
        "isolation",
        "secrets",
        "disk_full",
        "reads",
        "cross_agent",
        "prompt_privacy",
        "wrong",
    }
    assert figures["wrong"] == 0
    assert figures["secrets"]["caught"] == figures["secrets"]["shapes"] >= 60
    assert figures["isolation"]["attacks"] > 0
    assert figures["cross_agent"]["refused"] == figures["cross_agent"]["attempts"] >= 20
    assert figures["prompt_privacy"]["leaked"] == []
