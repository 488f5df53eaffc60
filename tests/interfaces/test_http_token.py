"""The API token file: created once, private, reused, and agreed on by racing processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memdir.errors import ConfigError
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
