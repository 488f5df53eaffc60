"""A REST server in its own process for the benchmarks that talk HTTP (soak, disk full).

``start_rest_server(home)`` runs ``python -m memdir.interfaces.http`` with the
hash embedder on a free loopback port, waits for ``/health`` and returns a
handle with a token-carrying ``httpx`` client, the server's RSS and ``stop()``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx


@dataclass
class RestServer:
    """A running server: its home, URL and process."""

    home: Path
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def client(self, timeout: float = 60) -> httpx.Client:
        token = (self.home / "api-token").read_text(encoding="utf-8").strip()
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def rss_bytes(self) -> int:
        """The server's resident set size now (Linux ``/proc``; 0 elsewhere)."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="utf-8")
        except OSError:
            return 0
        line = next((row for row in status.splitlines() if row.startswith("VmRSS:")), "")
        return int(line.split()[1]) * 1024 if line else 0

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_rest_server(
    home: Path, *, watch: bool = False, log_dir: Path | None = None
) -> RestServer:
    """Start a server on ``home`` (hash embedder; the file watcher only with ``watch``);
    its log goes to ``log_dir`` (default: beside the home)."""
    port = free_port()
    command = [sys.executable, "-m", "memdir.interfaces.http", "--home", str(home),
               "--port", str(port), "--embedder", "hash"]  # fmt: skip
    if not watch:
        command.append("--no-watch")
    home.parent.mkdir(parents=True, exist_ok=True)
    log = (log_dir or home.parent) / f"server-{port}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=out)
    server = RestServer(home, f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text(errors='replace')[-3000:]}")
        try:
            if httpx.get(server.url + "/health", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.stop()
    raise RuntimeError("the server did not answer /health within 60 s")
