from __future__ import annotations

from pathlib import Path

from memdir.interfaces.cli import app
from memdir.interfaces.cli.reference import commands_without_help, render_reference

DOC = Path(__file__).parents[2] / "docs" / "cli.md"


def test_every_command_has_help() -> None:
    assert commands_without_help(app) == []


def test_docs_cli_md_is_current() -> None:
    expected = render_reference(app)
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/cli.md is stale: run `python -m memdir.interfaces.cli.reference > docs/cli.md`"
    )
