"""Two homes change a file whose name is near the 255-byte limit: the sync keeps both."""

from __future__ import annotations

import subprocess
from pathlib import Path

from typer.testing import CliRunner

from memdir.interfaces.cli import app

runner = CliRunner()
FAST = ["--set", "embeddings.provider=hash"]
LONG = "notes/" + "\u00e9" * 125 + ".md"  # a 253-byte name


def cli(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), *FAST, *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_conflict_on_a_long_name_keeps_the_other_side_beside_it(tmp_path: Path) -> None:
    remote, a, b = tmp_path / "remote.git", tmp_path / "a", tmp_path / "b"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    cli(a, "files", "write", LONG, "--content", "# Long\n\n- base\n")
    cli(a, "sync", "--remote", str(remote))
    cli(b, "sync", "--remote", str(remote))
    cli(a, "files", "write", LONG, "--content", "# Long\n\n- from a\n")
    cli(a, "sync", "--remote", str(remote))
    cli(b, "files", "write", LONG, "--content", "# Long\n\n- from b\n")

    cli(b, "sync", "--remote", str(remote))

    assert (b / "workspace" / LONG).read_text("utf-8") == "# Long\n\n- from b\n"
    copies = list((b / "workspace" / "notes").glob("*.conflict-*.md"))
    assert len(copies) == 1, copies
    assert len(copies[0].name.encode()) <= 255
    assert copies[0].read_text("utf-8") == "# Long\n\n- from a\n"
    listed = cli(b, "files", "list", "notes/")
    assert copies[0].name in listed
