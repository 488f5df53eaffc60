"""Shared fixtures: an isolated MEMDIR_HOME per test and no stray MEMDIR_ variables."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for key in list(os.environ):
        if key.startswith("MEMDIR_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("MEMDIR_HOME", str(tmp_path / "home"))
    yield


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"
