"""Helpers for the CAMEL-style API tests: a hash-embedder Memory of one agent."""

from __future__ import annotations

from pathlib import Path

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory

AGENT = "camel-bot"


def open_memory(home: Path, agent_id: str | None = AGENT) -> Memory:
    """A Memory under ``home`` with the hash embedder and no chat model."""
    return Memory.open(home, agent_id, embedder=HashEmbedder(), chat_model=None)
