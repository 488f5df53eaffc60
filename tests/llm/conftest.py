"""Fixtures for the chat model tests: a live scripted HTTP server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_server import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    scripted.start()
    yield scripted
    scripted.stop()
