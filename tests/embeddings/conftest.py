"""Fixtures for the embedding tests: a live OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from embed_server import EmbeddingsServer


@pytest.fixture
def endpoint() -> Iterator[EmbeddingsServer]:
    server = EmbeddingsServer()
    server.start()
    yield server
    server.stop()
