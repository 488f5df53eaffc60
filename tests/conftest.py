"""Shared fixtures: an isolated MEMDIR_HOME per test, no stray MEMDIR_ variables, and the one
PostgreSQL server of a test session (pgserver or MEMDIR_TEST_PG_DSN), started when first used."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "store_pg"))
sys.path.insert(0, str(Path(__file__).parent / "llm"))  # llm_server: a scripted model endpoint
from pgserver_support import TestServer, start_server


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in list(os.environ):
        if key.startswith("MEMDIR_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("MEMDIR_HOME", str(tmp_path / "home"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[TestServer]:
    # Session fixtures are set up before the autouse fixture that clears MEMDIR_* variables.
    try:
        server = start_server()
    except RuntimeError as exc:
        pytest.skip(f"no PostgreSQL for the tests: {exc}")
    yield server
    server.stop()
