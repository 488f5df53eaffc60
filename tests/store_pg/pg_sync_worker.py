"""A separate process that edits files and syncs them into a shared PostgreSQL schema.

Used by test_concurrency_pg.py: ``python pg_sync_worker.py DSN SCHEMA ROOT NAME ROUNDS``.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from memdir.embeddings.base import HashEmbedder
from memdir.index import SourceFile, sync_files
from memdir.store.postgres import PostgresStore


def main(dsn: str, schema: str, root: str, name: str, rounds: int) -> None:
    folder = Path(root)
    rng = random.Random(name)
    embedder = HashEmbedder(32)
    with PostgresStore.open(dsn, schema=schema) as store:
        for round_number in range(rounds):
            for path in rng.sample(sorted(folder.glob("*.md")), 15):
                temp = path.with_suffix(f".{name}.tmp")
                temp.write_text(f"# {path.stem}\n\nedited by {name} in round {round_number}\n")
                os.replace(temp, path)
            files = [SourceFile("global", p.name, p) for p in sorted(folder.glob("*.md"))]
            sync_files(store, embedder, files, sources=["global"])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
