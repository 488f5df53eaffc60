"""Helpers of the reliability tests: child environments, tree snapshots, index comparison."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import live_server
from live_server import LiveServer, stop_server

__all__ = ["LiveServer", "start_server", "stop_server"]
from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory

HERE = Path(__file__).parent
QUERIES = ("reliability", "topic alpha", "decided database", "tea", "entry", "project notes")


def child_env() -> dict[str, str]:
    """The environment of a child process: no MEMDIR_ variables, unbuffered output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_worker(script: str, *args: str, timeout: float = 60) -> str:
    """Run a helper script of this folder to completion; return its stdout."""
    done = subprocess.run(
        [sys.executable, str(HERE / script), *args],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{script} failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return done.stdout


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256), hidden ones included."""
    found: dict[str, str] = {}
    if not root.exists():
        return found
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def workspace_snapshot(home: Path) -> dict[str, str]:
    """The files an agent can change: both kinds of workspace and the sessions."""
    found: dict[str, str] = {}
    for part in ("workspace", "agents", "sessions"):
        found.update({f"{part}/{k}": v for k, v in snapshot(home / part).items()})
    return found


def hits_of(memory: Memory, query: str) -> list[tuple[str, int, int, str, float]]:
    """Search hits as comparable tuples (source, lines, text, rounded score)."""
    results = memory.search(query, max_results=10, min_score=0.0, scope="agent")
    return [
        (f"{h.source}:{h.path}", h.start_line, h.end_line, h.text, round(h.score, 4))
        for h in results.hits
    ]


def fresh_rebuild_hits(home: Path, into: Path) -> dict[str, list[tuple[str, int, int, str, float]]]:
    """Copy the Markdown of ``home`` to ``into``, rebuild its index, search every query."""
    for part in ("workspace", "agents"):
        if (home / part).exists():
            shutil.copytree(home / part, into / part, symlinks=True)
    with Memory.open(into, embedder=HashEmbedder()) as fresh:
        fresh.rebuild()
        return {q: hits_of(fresh, q) for q in QUERIES}


def synced_hits(home: Path) -> dict[str, list[tuple[str, int, int, str, float]]]:
    """Re-sync the index of ``home`` (recovery) and search every query."""
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.sync()
        return {q: hits_of(memory, q) for q in QUERIES}


IndexRow = tuple[str, str, str, int, int, str, str, bytes]


def index_content(home: Path) -> tuple[list[tuple[str, str, str]], list[IndexRow], int]:
    """What the index of ``home`` holds, without ids: file hashes, units with vectors, and
    the units its kept terms cover.

    Two indexes of the same files compare equal whatever order they were built in.
    """
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        db = memory.store._conn().conn  # read-only peek: the store has no "dump" API
        files = sorted(db.execute("SELECT source, path, sha256 FROM files").fetchall())
        units = sorted(
            db.execute(
                "SELECT u.source, u.path, u.kind, u.start_line, u.end_line, u.text, u.sha256, "
                "e.vector FROM units u LEFT JOIN embeddings e ON e.id = u.vector_id"
            ).fetchall()
        )
        termed = sum(
            len(blob) // 8 for (blob,) in db.execute("SELECT units FROM file_terms").fetchall()
        )
    return files, units, termed


def fresh_index_content(
    home: Path, into: Path
) -> tuple[list[tuple[str, str, str]], list[IndexRow], int]:
    """Copy the Markdown of ``home`` to ``into``, build its index from scratch, dump it."""
    for part in ("workspace", "agents"):
        if (home / part).exists():
            shutil.copytree(home / part, into / part, symlinks=True)
    with Memory.open(into, embedder=HashEmbedder()) as fresh:
        fresh.rebuild()
    return index_content(into)


def synced_index_content(
    home: Path,
) -> tuple[list[tuple[str, str, str]], list[IndexRow], int]:
    """Re-sync the index of ``home`` (the recovery step), then dump it."""
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.sync()
    return index_content(home)


def fact_rows(memory: Memory) -> list[tuple[str, str, str, str | None, str | None]]:
    """Every fact, superseded and forgotten ones too, as comparable tuples."""
    facts = memory.list_facts(include_superseded=True, include_forgotten=True)
    return sorted(
        (
            f.id,
            f.text,
            f.category,
            None if f.valid_to is None else f.valid_to.isoformat(),
            None if f.forgotten_at is None else f.forgotten_at.isoformat(),
        )
        for f in facts
    )


def leftover_temp_files(home: Path) -> list[str]:
    """Temp files a killed writer left behind (hidden, never indexed)."""
    return sorted(p.name for p in home.rglob(".*.tmp"))


def start_server(home: Path, *extra: str) -> LiveServer:
    """A live REST server on ``home`` (hash embedder, no watcher); see tests/live_server.py."""
    return live_server.start_server(home, "--no-watch", *extra)
