"""``memdir token create|list|revoke``: print a token once, list scopes, revoke by id."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memdir.access import AccessTokens
from memdir.interfaces.cli import app


def run(home: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--home", str(home), *args])
    return result.exit_code, result.stdout, result.stderr


def test_create_prints_the_token_once_and_list_shows_its_scope(home: Path) -> None:
    code, out, err = run(home, "token", "create", "--agent", "alice", "--name", "laptop")
    assert code == 0, err
    token = out.strip()
    assert AccessTokens(home).verify(token) is not None
    assert "shown only now" in err
    code, out, _ = run(home, "--agent", "bob", "token", "create", "--json")  # the global option
    assert code == 0
    assert json.loads(out)["scope"] == "agent:bob"
    code, out, _ = run(home, "token", "list", "--json")
    rows = json.loads(out)
    assert [(row["scope"], row["name"]) for row in rows] == [("agent:alice", "laptop"),
                                                             ("agent:bob", "")]  # fmt: skip
    assert token not in out


def test_revoke_by_id(home: Path) -> None:
    _, out, _ = run(home, "token", "create", "--admin")
    token = out.strip()
    token_id = token.split("_")[1]
    code, out, _ = run(home, "token", "revoke", token_id)
    assert code == 0
    assert f"Revoked token {token_id} (admin)" in out
    assert AccessTokens(home).verify(token) is None


def test_create_needs_one_scope(home: Path) -> None:
    for args in ([], ["--admin", "--agent", "alice"]):
        code, _, err = run(home, "token", "create", *args)
        assert code == 1
        assert "pass --agent ID for a token of one agent, or --admin" in err
