"""A separate "host" serving a home it shares with others, with the index in PostgreSQL.

Used by test_shared_home_pg.py: ``python pg_host_worker.py DSN SCHEMA HOME NAME LINES GO``.
The worker opens ``Memory`` on ``HOME`` (the global workspace), waits until ``GO`` exists
(so the hosts start together), appends ``LINES`` lines ``NAME line i`` to the daily note
of 2026-03-01, writes ``memory/NAME-plan.md`` and saves one fact naming itself.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path

from memdir import Memory
from memdir.embeddings.base import HashEmbedder


def main(dsn: str, schema: str, home: str, name: str, lines: str, go: str) -> None:
    overrides = {"store": {"backend": "postgres", "dsn": dsn, "schema_name": schema}}
    embedder = HashEmbedder()
    with Memory.open(home, overrides=overrides, embedder=embedder, chat_model=None) as memory:
        deadline = time.monotonic() + 30
        while not Path(go).exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        for i in range(int(lines)):
            memory.append_daily(f"{name} line {i}", date=datetime(2026, 3, 1))
        plan = f"# {name}\n\nThe {name} host wrote this plan.\n"
        memory.write_file(f"memory/{name}-plan.md", plan)
        memory.save(f"The {name} host prefers green tea")


if __name__ == "__main__":
    main(*sys.argv[1:7])
