"""Fixtures: stores of either backend per test (the server is tests/conftest.py's pg_server)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pgserver_support import TestServer

from memdir.store import SqliteStore
from memdir.store.postgres import PostgresStore

OpenStore = Callable[..., Any]


@pytest.fixture
def pg_schema(pg_server: TestServer) -> Iterator[str]:
    """A fresh schema name, dropped after the test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    PostgresStore.delete(pg_server.dsn, name)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """``open_store(**options)`` opens (again) the one index of this test, on ``backend``."""
    opened: list[Any] = []
    if backend == "postgres":
        server: TestServer = request.getfixturevalue("pg_server")
        schema: str = request.getfixturevalue("pg_schema")

        def make(**options: Any) -> Any:
            store = PostgresStore.open(server.dsn, schema=schema, **options)
            opened.append(store)
            return store

    else:

        def make(**options: Any) -> Any:
            options.pop("vector_index", None)
            store = SqliteStore.open(tmp_path / "index.db", **options)
            opened.append(store)
            return store

    yield make
    for store in opened:
        store.close()
