"""Several hosts serving one home on a shared volume, with the index and facts in PostgreSQL.

The workspace files stay the truth (DESIGN.md, principle 1): every host reads and writes
them on the shared volume, under the same file locks as processes of one machine, and
indexes what it writes into the one PostgreSQL index. Here the hosts are processes
sharing one folder, as processes on several machines share a mounted volume.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pgserver_support import TestServer

from memdir import Memory
from memdir.embeddings.base import HashEmbedder

WORKER = Path(__file__).with_name("pg_host_worker.py")
DAILY = "memory/2026-03-01.md"


def open_host(home: Path, dsn: str, schema: str) -> Memory:
    overrides = {
        "store": {"backend": "postgres", "dsn": dsn, "schema_name": schema},
        "index": {"refresh_seconds": 3600},  # this host never re-syncs on its own here
    }
    return Memory.open(home, overrides=overrides, embedder=HashEmbedder(), chat_model=None)


@pytest.mark.slow
def test_hosts_sharing_a_home_see_each_others_writes_and_lose_no_line(
    pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    home = tmp_path / "shared-volume" / "home"
    lines = 150
    with open_host(home, pg_server.dsn, pg_schema) as reader:
        reader.init()
        reader.sync()  # this host's one full sync, before the others write
        go = tmp_path / "go"
        hosts = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(WORKER),
                    pg_server.dsn,
                    pg_schema,
                    str(home),
                    name,
                    str(lines),
                    str(go),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("alpha", "beta")
        ]
        go.touch()
        for host in hosts:
            _out, err = host.communicate(timeout=180)
            assert host.returncode == 0, err

        # A file a host writes is in the shared index when its write returns ...
        plans = reader.search("which host wrote this plan", max_results=5)
        assert {h.path for h in plans.hits} >= {"memory/alpha-plan.md", "memory/beta-plan.md"}
        # ... and a fact when its save returns.
        recalled = {r.fact.text for r in reader.recall("which host prefers green tea")}
        assert recalled == {"The alpha host prefers green tea", "The beta host prefers green tea"}

        # Both hosts appended to one note at once, under its file lock: no line is lost.
        note = reader.read_file(DAILY)
        for name in ("alpha", "beta"):
            assert [f"{name} line {i}" in note for i in range(lines)] == [True] * lines
        # ... and so is every line appended: each append indexed its note when it returned.
        found = reader.search("beta line 149", max_results=1, fresh=False)
        assert found.hits[0].path == DAILY
    assert not (home / "index" / "memdir.db").exists()  # nothing of the index on the volume
