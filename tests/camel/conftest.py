"""Fixtures for the CAMEL-style API: a hash-embedder Memory of one agent in tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support_camel import open_memory

from memdir.memory import Memory


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    (home / "workspace").mkdir(parents=True)  # an empty home
    with open_memory(home) as opened:
        yield opened
