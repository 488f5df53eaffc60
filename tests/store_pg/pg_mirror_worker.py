"""A separate "server" that appends daily-note lines to one agent served from PostgreSQL.

Used by test_mirror_pg.py: ``python pg_mirror_worker.py DSN SCHEMA HOME AGENT NAME N GO_FILE``.
The worker opens ``Memory`` on its own home (the test sets
``MEMDIR_STORE__WORKSPACE_FILES=postgres`` in its environment), waits until
``GO_FILE`` exists (so both workers start together), then appends ``N`` lines
``NAME line i`` to the daily note of 2026-03-01 through ``Memory.append_daily``.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path

from memdir import Memory


def main(dsn: str, schema: str, home: str, agent: str, name: str, count: str, go: str) -> None:
    overrides = {
        "store": {"backend": "postgres", "dsn": dsn, "schema_name": schema},
    }
    with Memory.open(home, agent, overrides=overrides, embedder=None, chat_model=None) as memory:
        if memory.settings.store.workspace_files != "postgres":
            raise SystemExit("MEMDIR_STORE__WORKSPACE_FILES=postgres is not in effect")
        deadline = time.monotonic() + 30
        while not Path(go).exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        for i in range(int(count)):
            memory.append_daily(f"{name} line {i}", date=datetime(2026, 3, 1))


if __name__ == "__main__":
    main(*sys.argv[1:8])
