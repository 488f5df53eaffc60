"""The PostgreSQL server of tests/store_pg (pgserver or MEMDIR_TEST_PG_DSN), for the benchmarks."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "store_pg"))
from pgserver_support import TestServer, start_server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[TestServer]:
    try:
        server = start_server()
    except RuntimeError as exc:
        pytest.skip(f"no PostgreSQL for the tests: {exc}")
    yield server
    server.stop()
