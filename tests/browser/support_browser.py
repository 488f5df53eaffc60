"""Helpers of the browser tests: a seeded home, a live server process, headless chromium."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import live_server
from live_server import LiveServer, stop_server
from memdir.memory import Memory

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "FACTS_READY",
    "HOSTILE_IMG",
    "HOSTILE_SCRIPT",
    "LiveServer",
    "chromium_missing",
    "seed_home",
    "start_server",
    "stop_server",
]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOSTILE_SCRIPT = "<script>window.__pwned = 'script'</script>"
HOSTILE_IMG = "<img src=x onerror=\"window.__pwned = 'img'; alert(1)\">"
FACTS_READY = all(hasattr(Memory, name) for name in ("save", "forget", "list_facts"))


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        return "chromium is not installed (apt-get install -y chromium); CI installs it"
    return None


def seed_home(home: Path) -> None:
    """Daily notes, bootstrap files (one over its budget) and an agent workspace."""
    with Memory.open(home, embedder=None) as memory:
        memory.append_daily(
            "Decided to shard the orders table by region.\n"
            "The staging database listens on port 5433.\n"
            "Rollback plan: keep the old cluster for two weeks.",
            date=datetime(2024, 5, 2, 9, 0),
        )
        memory.append_daily(
            f"Pasted from a web page: {HOSTILE_SCRIPT} and {HOSTILE_IMG} quarantine marker.",
            date=datetime(2024, 5, 3, 9, 0),
        )
        memory.write_file("MEMORY.md", "# Memory\n\n- The user prefers short answers.\n")
        memory.write_file("AGENTS.md", "# Agents\n\n" + "Follow the runbook step by step.\n" * 900)
    with Memory.open(home, "coder", embedder=None) as coder:
        coder.append_daily(
            "The coder agent migrated the build to zebrafish tooling.",
            date=datetime(2024, 5, 4, 9, 0),
        )


def start_server(home: Path) -> LiveServer:
    """A live server on the seeded ``home``, without the file watcher."""
    return live_server.start_server(home, "--no-watch")
