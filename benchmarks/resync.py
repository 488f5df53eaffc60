"""Benchmark: an unchanged re-sync of 10,000 markdown files (target <= 1 s).

Run: .venv/bin/python benchmarks/resync.py [file_count]
Prints the time of the first (full) sync and of the unchanged re-syncs, keyword-only
and with the hash embedder.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from memdir.embeddings.base import Embedder, HashEmbedder
from memdir.index import SourceFile, sync_files
from memdir.store import SqliteStore


def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / "memory").mkdir(parents=True)
        for n in range(count):
            (root / "memory" / f"note-{n:05}.md").write_text(
                f"# Note {n}\n\nSomething worth remembering, number {n}.\n\n- a point\n- another\n"
            )
        files = [
            SourceFile("global", p.relative_to(root).as_posix(), p)
            for p in sorted(root.rglob("*.md"))
        ]
        for label, embedder in (("keyword-only", None), ("hash embedder", HashEmbedder(64))):
            resync(Path(tmp) / f"{label}.db", files, label, embedder)


def resync(db: Path, files: list[SourceFile], label: str, embedder: Embedder | None) -> None:
    count = len(files)
    with SqliteStore.open(db) as store:
        started = time.perf_counter()
        first = sync_files(store, embedder, files, sources=["global"])
        print(
            f"[{label}] first sync of {count} files: {time.perf_counter() - started:.2f} s "
            f"({first.added} added, {first.units_written} units)"
        )
        for attempt in range(3):
            started = time.perf_counter()
            again = sync_files(store, embedder, files, sources=["global"])
            elapsed = time.perf_counter() - started
            print(
                f"[{label}] unchanged re-sync #{attempt + 1}: {elapsed * 1000:.0f} ms "
                f"({again.unchanged} unchanged, {again.units_written} units written)"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
