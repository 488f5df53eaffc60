"""Fixtures for the interface tests: a hash-embedder Memory and a live HTTP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support_interfaces import LiveServer, start_server, stop_server

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    (home / "workspace").mkdir(parents=True)  # an empty home
    with Memory.open(home, embedder=HashEmbedder()) as opened:
        yield opened


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = start_server(tmp_path_factory.mktemp("server") / "home", "--no-watch")
    yield live
    stop_server(live.process)


@pytest.fixture
def api(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client
