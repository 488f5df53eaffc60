"""A live ``python -m memdir.interfaces.http`` process, shared by the browser and interface tests.

Importable as ``live_server`` from any test folder: ``tests/`` is on ``sys.path``
because pytest (rootdir-relative "prepend" imports, no ``__init__.py``) inserts the
folder of ``tests/conftest.py``, just as it inserts each test folder for its
``support_*.py`` module.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def child_env() -> dict[str, str]:
    """This process's environment without MEMDIR_ variables, output unbuffered."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass
class LiveServer:
    """A ``python -m memdir.interfaces.http`` process on a free port.

    ``fact_ids`` holds the ids of facts a fixture saved through it, by a short name.
    """

    home: Path
    url: str
    process: subprocess.Popen[bytes]
    fact_ids: dict[str, str] = field(default_factory=dict)
    log: Path | None = None  # the server's output

    @property
    def token(self) -> str:
        return (self.home / "api-token").read_text(encoding="utf-8").strip()

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def start_server(home: Path, *extra: str) -> LiveServer:
    """Start a server on ``home`` with the hash embedder (plus ``extra`` arguments); wait for
    ``/health``. The server's output goes to ``server-<port>.log`` beside ``home``."""
    port = free_port()
    home.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "memdir.interfaces.http", "--home", str(home),
               "--port", str(port), "--embedder", "hash", *extra]  # fmt: skip
    log_path = home.parent / f"server-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=child_env(), stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = log_path.read_text(errors="replace")
            raise RuntimeError(f"the server exited with {process.returncode}: {err}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return LiveServer(home, url, process, log=log_path)
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
