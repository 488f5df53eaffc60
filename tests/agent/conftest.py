"""Fixtures for the chat agent tests: a Memory in tmp_path with the hash embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    """A seeded global workspace; curation on the heuristics (no chat model)."""
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as opened:
        opened.init()
        yield opened


@pytest.fixture
def bare_memory(home: Path) -> Iterator[Memory]:
    """An unseeded home: a short system prompt, for tests with a tiny context window
    (without the recent daily notes, which grow as the chat saves facts)."""
    no_notes = {"prompt": {"recent_notes_days": 0}}
    (home / "workspace").mkdir(parents=True)  # a home, with no files yet
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None, overrides=no_notes) as opened:
        yield opened
