"""`memdir mcp-config HOST`: what it prints parses, and `--check` reaches memdir as a host
would (a real `memdir mcp` subprocess, a real `memdir serve`)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from live_server import start_server, stop_server
from memdir.interfaces.cli.mcp_config import HOSTS


def memdir(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "memdir", "--home", str(home), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_each_host_gets_a_document_it_can_parse(host: str, home: Path) -> None:
    done = memdir(home, "--agent", "coder", "mcp-config", host)
    assert done.returncode == 0, done.stderr
    parsed = tomllib.loads(done.stdout) if host == "codex" else json.loads(done.stdout)
    text = json.dumps(parsed)
    assert str(home) in text
    assert '"--agent", "coder"' in text
    assert HOSTS[host].where.split(",")[0] in done.stderr  # where the host keeps it


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["mcp-config", "vim"], "unknown host 'vim'; choose one of claude-desktop"),
        (["mcp-config", "cursor", "--transport", "sse"], "--transport is stdio or http"),
        (["mcp-config", "claude-desktop", "--transport", "http"], "use --transport stdio"),
        (["mcp-config", "zed", "--transport", "http"], "start `memdir serve` once"),
        (["mcp-config", "codex", "--entry"], "Codex reads TOML"),
    ],
)
def test_a_bad_request_says_what_to_do(home: Path, args: list[str], said: str) -> None:
    done = memdir(home, *args)
    assert done.returncode == 1
    assert said in done.stderr, done.stderr
    assert done.stdout == ""


def test_check_starts_the_stdio_server_as_the_host_would(home: Path) -> None:
    done = memdir(home, "mcp-config", "codex", "--check")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: ")
    assert "memory_search answered" in done.stdout


def test_check_reaches_a_running_server_with_the_token(home: Path, tmp_path: Path) -> None:
    server = start_server(home)
    try:
        port = server.url.rsplit(":", 1)[1]
        done = memdir(home, "--set", f"server.port={port}", "mcp-config", "cursor",
                      "--transport", "http", "--check")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "memory_search answered" in done.stdout
        zed = memdir(home, "--set", f"server.port={port}", "mcp-config", "zed",
                     "--transport", "http")  # fmt: skip
        assert json.loads(zed.stdout)["context_servers"]["memdir"]["headers"] == {
            "Authorization": f"Bearer {server.token}"
        }
    finally:
        stop_server(server.process)
    refused = memdir(tmp_path / "down", "--set", "server.port=9", "mcp-config", "gemini",
                     "--transport", "http", "--check")  # fmt: skip
    assert refused.returncode == 1
    assert "no token yet" in refused.stderr, refused.stderr
