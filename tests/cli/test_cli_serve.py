"""`memdir serve`, the main job, through the installed entry point in a real subprocess."""

from __future__ import annotations

import os
import pty
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_serve_answers_rest_with_the_first_run_token(home: Path) -> None:
    port = free_port()
    env = {**os.environ, "MEMDIR_HOME": str(home)}
    base = [sys.executable, "-m", "memdir", "--set", "embeddings.provider=hash"]
    subprocess.run([*base, "init"], env=env, check=True, capture_output=True)
    note = home / "workspace" / "memory" / "2026-01-05.md"
    note.write_text("# 2026-01-05\n\n- We chose PostgreSQL for billing.\n", encoding="utf-8")
    log = (home.parent / "serve.log").open("w")
    proc = subprocess.Popen(
        [*base, "serve", "--port", str(port)], env=env, stdout=log, stderr=log, text=True
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, (home.parent / "serve.log").read_text()
            assert time.monotonic() < deadline, "server did not start within 30 s"
            time.sleep(0.2)
        token_file = home / "api-token"
        assert token_file.stat().st_mode & 0o777 == 0o600
        token = token_file.read_text(encoding="utf-8").strip()
        assert httpx.get(f"{url}/api/v1/search", params={"query": "x"}).status_code == 401
        answer = httpx.get(
            f"{url}/api/v1/search", params={"query": "which database for billing"},
            headers={"Authorization": f"Bearer {token}"},
        )  # fmt: skip
        assert answer.status_code == 200
        hits = answer.json()["hits"]
        assert hits
        assert hits[0]["path"] == "memory/2026-01-05.md"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def _read_banner(fd: int, until: bytes, timeout_s: float = 30.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout_s
    while until not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # the other side closed
                break
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("on_terminal", [True, False])
def test_serve_prints_the_sign_in_link_once_and_only_on_a_terminal(
    home: Path, on_terminal: bool
) -> None:
    env = {**os.environ, "MEMDIR_HOME": str(home), "COLUMNS": "200"}
    command = [sys.executable, "-m", "memdir", "--set", "embeddings.provider=hash", "serve",
               "--port", str(free_port())]  # fmt: skip
    if on_terminal:
        reader, writer = pty.openpty()
    else:
        reader, writer = os.pipe()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=writer)
    os.close(writer)
    try:
        banner = _read_banner(reader, b"Ctrl-C to stop").decode()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        os.close(reader)
    token = (home / "api-token").read_text(encoding="utf-8").strip()
    assert "/docs" in banner
    if on_terminal:
        assert banner.count(f"/#token={token}") == 1
    else:
        assert token not in banner
        assert "api-token" in banner
