"""Two real processes syncing the same sources into one PostgreSQL schema at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pgserver_support import TestServer

from keyword_support import keyword_hits
from memdir.embeddings.base import HashEmbedder
from memdir.index import SourceFile, sync_files
from memdir.store.postgres import PostgresStore

WORKER = Path(__file__).with_name("pg_sync_worker.py")


def _content(store: PostgresStore) -> set[tuple[str, str, int, int, str]]:
    hits = keyword_hits(store, "edited original", ["global"], "chunk", 10_000)
    hits += keyword_hits(store, "edited original", ["global"], "block", 10_000)
    units = store.get_units(h.unit_id for h in hits)
    return {(u.path, u.kind, u.start_line, u.end_line, u.text) for u in units.values()}


@pytest.mark.slow
def test_two_processes_sync_one_schema(
    pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(120):
        (root / f"note{n:03}.md").write_text(f"# note{n:03}\n\noriginal text {n}\n\n- item {n}\n")
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), pg_server.dsn, pg_schema, str(root), name, "4"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    for worker in workers:
        _out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        assert "Traceback" not in err

    files = [SourceFile("global", p.name, p) for p in sorted(root.glob("*.md"))]
    with PostgresStore.open(pg_server.dsn, schema=pg_schema) as store:
        sync_files(store, HashEmbedder(32), files, sources=["global"])
        shared = _content(store)
        stats = store.stats()
    fresh_schema = pg_schema + "_fresh"
    try:
        with PostgresStore.open(pg_server.dsn, schema=fresh_schema) as fresh:
            sync_files(fresh, HashEmbedder(32), files, sources=["global"])
            expected = _content(fresh)
            fresh_stats = fresh.stats()
    finally:
        PostgresStore.delete(pg_server.dsn, fresh_schema)
    assert shared == expected
    assert (stats.files, stats.chunks, stats.blocks) == (
        fresh_stats.files,
        fresh_stats.chunks,
        fresh_stats.blocks,
    )
    assert stats.vectors == stats.chunks + stats.blocks
