"""Fixtures of the reliability tests: a hash-embedder ``Memory`` on a fresh home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    with Memory.open(home, embedder=HashEmbedder()) as opened:
        opened.init()
        yield opened
