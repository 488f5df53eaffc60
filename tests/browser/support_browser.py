"""Helpers of the browser tests: a seeded home, a live server process, headless chromium."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

from memdir.memory import Memory

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


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class LiveServer:
    """A ``python -m memdir.interfaces.http`` process on a free port."""

    home: Path
    url: str
    process: subprocess.Popen[bytes]
    fact_ids: dict[str, str] = field(default_factory=dict)

    @property
    def token(self) -> str:
        return (self.home / "api-token").read_text(encoding="utf-8").strip()

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def start_server(home: Path) -> LiveServer:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    command = [sys.executable, "-m", "memdir.interfaces.http", "--home", str(home),
               "--port", str(port), "--embedder", "hash", "--no-watch"]  # fmt: skip
    log_path = home.parent / f"server-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = log_path.read_text(errors="replace")
            raise RuntimeError(f"the server exited with {process.returncode}: {err}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return LiveServer(home, url, process)
        except httpx.TransportError:
            time.sleep(0.1)
    stop_server(process)
    raise RuntimeError("the server did not answer /health within 30 s")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
