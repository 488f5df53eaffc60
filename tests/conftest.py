"""Shared fixtures: an isolated MEMDIR_HOME per test and no stray MEMDIR_ variables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in list(os.environ):
        if key.startswith("MEMDIR_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("MEMDIR_HOME", str(tmp_path / "home"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"
