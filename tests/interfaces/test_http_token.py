"""The API token file: created once, private, reused, and agreed on by racing processes; the
tokens of ``memdir token create``: scoped, kept as digests, revoked at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memdir.access import API_TOKEN_ID, AccessTokens, Principal
from memdir.errors import (
    ConfigError,
    InvalidAgentIdError,
    InvalidInputError,
    MemdirError,
)
from memdir.interfaces.http import load_or_create_token, token_path


def test_first_use_creates_a_private_token(home: Path) -> None:
    token = load_or_create_token(home)
    path = token_path(home)
    assert path == home / "api-token"
    assert path.read_text().strip() == token
    assert path.stat().st_mode & 0o777 == 0o600
    assert len(token) >= 32


def test_the_token_is_reused(home: Path) -> None:
    assert load_or_create_token(home) == load_or_create_token(home)
    assert [p.name for p in home.iterdir()] == ["api-token"]  # no temp files left


def test_an_empty_token_file_is_a_clear_error(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "api-token").write_text("\n")
    with pytest.raises(ConfigError, match="delete the file"):
        load_or_create_token(home)


@pytest.mark.slow
def test_racing_first_runs_agree_on_one_token(home: Path) -> None:
    code = "import sys; from pathlib import Path; from memdir.interfaces.http.auth import " \
           "load_or_create_token as f; print(f(Path(sys.argv[1])))"  # fmt: skip
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(home)], stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    tokens = {proc.communicate(timeout=60)[0].strip() for proc in procs}
    assert len(tokens) == 1
    assert tokens == {(home / "api-token").read_text().strip()}


# -- tokens of one agent, and more admin tokens (memdir.access) ----------------------------


def test_a_created_token_is_verified_by_its_scope_and_kept_only_as_a_digest(home: Path) -> None:
    store = AccessTokens(home)
    alice, record = store.create("alice", "alice's laptop")
    admin, _ = store.create(None)
    assert alice.startswith("mdt_")
    assert store.verify(alice) == Principal(record.id, "alice")
    assert store.verify(admin) == Principal(admin.split("_")[1], None)
    assert store.verify(alice[:-1] + ("A" if alice[-1] != "A" else "B")) is None
    assert store.verify("mdt_00000000_" + "x" * 43) is None
    stored = (home / "tokens.json").read_text(encoding="utf-8")
    assert alice not in stored
    assert admin not in stored
    assert [r.name for r in store.list()] == ["alice's laptop", ""]


def test_the_api_token_file_stays_the_admin_token(home: Path) -> None:
    token = load_or_create_token(home)
    principal = AccessTokens(home).verify(token)
    assert principal == Principal(API_TOKEN_ID, None)


def test_revoking_takes_effect_for_a_store_already_reading(home: Path) -> None:
    reading = AccessTokens(home)
    token, record = AccessTokens(home).create("bob")
    assert reading.verify(token) is not None
    AccessTokens(home).revoke(record.id)
    assert reading.verify(token) is None


@pytest.mark.parametrize(
    ("token_id", "fragment"),
    [("api-token", "delete that file"), ("zzz", "8 hex digits"), ("0badf00d", "memdir token list")],
)
def test_revoking_what_is_not_a_token_says_what_to_do(
    home: Path, token_id: str, fragment: str
) -> None:
    with pytest.raises(MemdirError, match=fragment):
        AccessTokens(home).revoke(token_id)


def test_bad_agent_ids_and_names_are_refused(home: Path) -> None:
    with pytest.raises(InvalidAgentIdError):
        AccessTokens(home).create("Bad Agent")
    with pytest.raises(InvalidInputError, match="--name"):
        AccessTokens(home).create("alice", "x" * 200)


def test_an_unreadable_tokens_file_is_a_clear_error(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "tokens.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="memdir token create"):
        AccessTokens(home).verify("mdt_00000000_" + "x" * 43)
