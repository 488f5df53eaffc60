"""``memdir files``: read --json with the sha256, hash-checked changes refused in CLI
terms, create-only, insert, rename, delete and the multi-line daily append."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from typer.testing import CliRunner

from memdir.interfaces.cli import app

runner = CliRunner()
FAST = ["--set", "embeddings.provider=hash"]


def run(home: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--home", str(home), *FAST, *args], input=input)
    return result.exit_code, result.stdout, result.stderr


def test_a_stale_write_names_the_flag_and_the_command_to_read_again(home: Path) -> None:
    run(home, "files", "write", "notes/a.md", "--content", "v1\n")
    code, out, _ = run(home, "files", "read", "notes/a.md", "--json")
    assert code == 0
    read = json.loads(out)
    assert read == {
        "path": "notes/a.md",
        "content": "v1\n",
        "sha256": hashlib.sha256(b"v1\n").hexdigest(),
    }
    run(home, "files", "write", "notes/a.md", "--content", "v2\n")
    code, _, err = run(
        home, "files", "write", "notes/a.md", "--content", "v3\n",
        "--expected-sha256", read["sha256"],
    )  # fmt: skip
    assert code == 1
    assert "changed since you read it" in err
    assert "`memdir files read PATH --json` (its sha256 is the new --expected-sha256)" in err
    code, _, err = run(
        home, "files", "edit", "notes/a.md", "--old", "v2", "--new", "v3",
        "--expected-sha256", read["sha256"],
    )  # fmt: skip
    assert code == 1
    assert run(home, "files", "read", "notes/a.md")[1] == "v2\n"
    code, _, err = run(home, "files", "write", "notes/a.md", "--content", "x", "--create-only")
    assert code == 1
    assert "already exists" in err


def test_insert_rename_delete(home: Path) -> None:
    run(home, "files", "write", "notes/l.md", "--content", "one\nthree\n")
    code, out, _ = run(home, "files", "insert", "notes/l.md", "1", "--text", "two")
    assert code == 0
    assert hashlib.sha256(b"one\ntwo\nthree\n").hexdigest() in out
    assert run(home, "files", "insert", "notes/l.md", "0", input="zero\n")[0] == 0
    assert run(home, "files", "read", "notes/l.md")[1] == "zero\none\ntwo\nthree\n"
    code, _, err = run(home, "files", "insert", "notes/l.md", "7", "--text", "x")
    assert code == 1
    assert "to 4 (after the last)" in err
    run(home, "files", "write", "notes/t.md", "--content", "taken\n")
    code, _, err = run(home, "files", "rename", "notes/l.md", "notes/t.md")
    assert code == 1
    assert "already exists" in err
    assert run(home, "files", "rename", "notes/l.md", "archive/l.md")[1] == (
        "renamed notes/l.md to archive/l.md\n"
    )
    assert run(home, "files", "delete", "archive/l.md")[0] == 0
    assert run(home, "files", "list", "archive/")[1] == ""


def test_append_daily_takes_a_multi_line_entry_from_stdin(home: Path) -> None:
    summary = "".join(f"- line {n}\n" for n in range(1, 11))
    code, out, _ = run(home, "files", "append-daily", "--json", input=summary)
    assert code == 0
    where = json.loads(out)
    assert where["end_line"] - where["start_line"] == 9
    note = (home / "workspace" / where["path"]).read_text().split("\n")
    assert note[where["start_line"] - 1 : where["end_line"]] == summary.splitlines()
    assert where["citation"] == f"{where['path']}:{where['start_line']}-{where['end_line']}"
