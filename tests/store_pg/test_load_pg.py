"""The mixed load of benchmarks/load.py on PostgreSQL: no lost write, no error to a caller."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pgserver_support import TestServer

pytestmark = pytest.mark.slow
LOAD = Path(__file__).parents[2] / "benchmarks" / "load.py"


def test_mixed_load_on_postgres_loses_nothing(
    tmp_path: Path, pg_server: TestServer, pg_schema: str
) -> None:
    env = {
        **os.environ,
        "MEMDIR_STORE__BACKEND": "postgres",
        "MEMDIR_STORE__DSN": pg_server.dsn,
        "MEMDIR_STORE__SCHEMA_NAME": pg_schema,
    }
    args = ["--processes", "2", "--threads", "3", "--seconds", "4", "--json"]
    done = subprocess.run(
        [sys.executable, str(LOAD), *args, "--home", str(tmp_path / "home")],
        env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.stdout, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["errors"] == 0, figures["error_samples"]
    assert figures["lost"] == []
    for op in ("append", "save", "search", "sync", "write"):
        assert figures["ops"][op]["count"] > 0, f"no {op} ran: the mix proves nothing"
    assert not (tmp_path / "home" / "index" / "memdir.db").exists(), "the load ran on SQLite"
    assert done.returncode == 0
