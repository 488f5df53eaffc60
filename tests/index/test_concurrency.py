"""Two real processes syncing one database at the same time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from keyword_support import keyword_hits
from memdir.embeddings.base import HashEmbedder
from memdir.index import SourceFile, sync_files
from memdir.store import SqliteStore

WORKER = Path(__file__).with_name("sync_worker.py")


def _content(store: SqliteStore) -> set[tuple[str, str, int, int, str]]:
    hits = keyword_hits(store, "edited original", ["global"], "chunk", 10_000)
    hits += keyword_hits(store, "edited original", ["global"], "block", 10_000)
    units = store.get_units(h.unit_id for h in hits)
    return {(u.path, u.kind, u.start_line, u.end_line, u.text) for u in units.values()}


@pytest.mark.slow
def test_two_processes_sync_one_database(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(120):
        (root / f"note{n:03}.md").write_text(f"# note{n:03}\n\noriginal text {n}\n\n- item {n}\n")
    db = tmp_path / "index.db"
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(db), str(root), name, "4"],
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
        assert "locked" not in err

    files = [SourceFile("global", p.name, p) for p in sorted(root.glob("*.md"))]
    with SqliteStore.open(db) as store:
        sync_files(store, HashEmbedder(32), files, sources=["global"])
        shared = _content(store)
        stats = store.stats()
    with SqliteStore.open(tmp_path / "fresh.db") as fresh:
        sync_files(fresh, HashEmbedder(32), files, sources=["global"])
        expected = _content(fresh)
        fresh_stats = fresh.stats()
    assert shared == expected
    assert (stats.files, stats.chunks, stats.blocks) == (
        fresh_stats.files,
        fresh_stats.chunks,
        fresh_stats.blocks,
    )
    assert stats.vectors == stats.chunks + stats.blocks
