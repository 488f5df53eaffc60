"""`memdir restore` and `memdir undo` of a version whose text is not UTF-8 (written outside
memdir): a clear error, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memdir.interfaces.cli import app

runner = CliRunner()


def test_a_version_that_is_not_utf8_is_refused_and_the_file_stays(home: Path) -> None:
    base = ["--home", str(home), "--set", "embeddings.provider=hash"]
    assert (
        runner.invoke(app, [*base, "files", "write", "memory/n.md", "--content", "# N\n"]).exit_code
        == 0
    )
    (home / "workspace" / "memory" / "n.md").write_bytes(b"# N\n\xff caf\xe9\n")  # an editor
    listed = runner.invoke(app, [*base, "history", "memory/n.md", "--json"])
    assert listed.exit_code == 0, listed.output
    latin1 = json.loads(listed.stdout)["versions"][0]["id"]
    fixed = "# N\n\nfixed\n"
    assert (
        runner.invoke(app, [*base, "files", "write", "memory/n.md", "--content", fixed]).exit_code
        == 0
    )
    for command in (["restore", latin1, "memory/n.md"], ["undo", "memory/n.md"]):
        result = runner.invoke(app, [*base, *command])
        assert result.exit_code == 1, (command, result.output)
        assert "is not UTF-8 text (byte 4)" in result.stderr, result.stderr
        assert "restore another version of 'memory/n.md'" in result.stderr
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert (home / "workspace" / "memory" / "n.md").read_text("utf-8") == fixed
