"""Facts by id through the CLI: ``memdir facts get|update|history``; search's cut and footer."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memdir.interfaces.cli import app

runner = CliRunner()


def run(home: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--home", str(home), "--set", "embeddings.provider=hash", *args])
    return result.exit_code, result.stdout, result.stderr


def test_get_update_history_by_id(home: Path) -> None:
    code, out, _ = run(home, "save", "The team lunch is on Thursday", "--json")
    assert code == 0
    old = json.loads(out)["fact"]["id"]
    code, out, _ = run(home, "facts", "update", old, "The team lunch is on Friday", "--json")
    assert code == 0
    new = json.loads(out)["fact"]
    assert (new["supersedes"], new["current"]) == (old, True)
    code, out, _ = run(home, "facts", "get", old)
    assert code == 0
    assert f"superseded by {new['id']}" in out
    assert "Thursday" in out
    code, out, _ = run(home, "facts", "history", new["id"], "--json")
    history = json.loads(out)
    assert [v["id"] for v in history["versions"]] == [old, new["id"]]
    code, out, _ = run(home, "facts", "history", old)
    assert f"current version {new['id']}" in out
    code, _, err = run(home, "facts", "update", old, "The team lunch is on Monday")
    assert code == 1
    assert f"its latest version is '{new['id']}'" in err
    code, _, err = run(home, "facts", "get", "lunch")
    assert code == 1
    assert "e.g. 'f-ab12cd34ef'; find it with `memdir recall QUESTION`" in err


def test_search_cuts_a_long_hit_and_says_how_many_files_it_searched(home: Path) -> None:
    note = "# 2024-06-01\n\nThe zebra runbook: " + " ".join(["restart the queue"] * 200) + "\n"
    code, _, _ = run(home, "files", "write", "memory/2024-06-01.md", "--content", note)
    assert code == 0
    code, out, _ = run(home, "search", "zebra runbook", "--explain")
    assert code == 0
    assert "characters shown; all of it: memdir get memory/2024-06-01.md --from 3" in out
    assert "--lines 1" in out
    assert out.rstrip().endswith("file(s).")
    assert "Searched" in out
    assert "fused=" in out  # the breakdown, behind --explain
    code, out, _ = run(home, "search", "zebra runbook", "--limit", "1", "--json")
    assert len(json.loads(out)["hits"]) == 1
