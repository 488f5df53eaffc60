"""Fixtures for the curation tests: workspaces in tmp_path and a clock moved by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from curate_support import FakeClock

from memdir.workspace import Workspace


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def workspace(home: Path) -> Workspace:
    space = Workspace(home, "coder")
    space.root.mkdir(parents=True)
    return space
