"""Reads never write: search, recall, get and prompt on a read-only home and a full disk.

A red-team run found a full disk or a read-only home made memory unreadable: recall
wrote access counts, a search synced first, opening the facts replayed the notes, and a
read-only home failed with "unable to open database file". This benchmark seeds a home
(a note, a fact, an index), then in a child process:

* ``read_only``: the home is bind-mounted read-only onto itself in a private mount
  namespace (``unshare --map-root-user --mount``: works as root, whom file modes do not
  stop, and as any user where user namespaces are enabled); without namespaces, a user
  other than root gets the same condition from file modes (``chmod``);
* ``full_disk``: the home lives on a small tmpfs filled to the last byte, after a
  write that failed (its note is left dirty for the next search to index).

On each, every read runs through the Python API, the CLI, REST and MCP (over HTTP) and
must answer with the seeded fact; a write must be refused with a clear error (REST 503
"Read only home" or 507 "Disk full"), and on a read-only home ``memdir serve`` must
start and say so in one line. Each failure is one ``wrong``; the target is 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from memdir.bench.rest_server import RestServer, start_rest_server
from memdir.embeddings.base import HashEmbedder
from memdir.errors import DiskFullError, MemdirError, ReadOnlyHomeError
from memdir.memory import Memory

FACT = "The team meets on Tuesdays"
QUERY = "when does the team meet"
TMPFS_BYTES = 8 * 1024 * 1024
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PROTOCOL = "2025-06-18"
READ_ONLY_LINE = "is read-only: serving reads only"
READS = ("search", "recall", "get", "prompt")


@dataclass
class ReadsReport:
    """What each read answered on one condition (``read_only`` or ``full_disk``)."""

    condition: str
    method: str  # "bind" (a read-only mount), "chmod" (file modes), "tmpfs" or "skipped: ..."
    reads: dict[str, bool] = field(default_factory=dict)  # interface:read -> found the fact
    writes: dict[str, str] = field(default_factory=dict)  # interface:write -> how refused
    problems: list[str] = field(default_factory=list)

    @property
    def wrong(self) -> int:
        return sum(1 for ok in self.reads.values() if not ok) + len(self.problems)


def seed(home: Path) -> None:
    """A home with a note, a fact and an index, as a running memdir leaves it."""
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.init()
        memory.write_file("memory/projects.md", "# Projects\n\n- the search rewrite\n")
        memory.save(FACT)
        memory.sync()
    token = home / "api-token"  # the admin token a served home has
    token.write_text(secrets.token_urlsafe(32) + "\n", encoding="utf-8")
    token.chmod(0o600)


def _check(report: ReadsReport, name: str, read: Callable[[], str]) -> None:
    try:
        text = read()
    except Exception as exc:  # boundary: every failure is counted, not raised
        report.reads[name] = False
        report.problems.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
        return
    report.reads[name] = "Tuesdays" in text
    if "Tuesdays" not in text:
        report.problems.append(f"{name}: the fact is missing from {text[:200]!r}")


def _refused(
    report: ReadsReport, name: str, write: Callable[[], Any], wanted: type[Exception]
) -> None:
    try:
        write()
    except wanted as exc:
        report.writes[name] = type(exc).__name__
    except Exception as exc:  # boundary: counted
        report.problems.append(f"{name}: {type(exc).__name__} instead of {wanted.__name__}")
    else:
        report.problems.append(f"{name}: a write succeeded on a home that cannot be written")


def _python(home: Path, report: ReadsReport, refusal: type[MemdirError]) -> None:
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        _check(report, "python:search", lambda: str(memory.search("team meets").hits))
        _check(report, "python:recall", lambda: str(memory.recall(QUERY)))
        note = next((home / "workspace" / "memory").glob("????-??-??.md")).name
        _check(report, "python:get", lambda: memory.get(f"memory/{note}").text)
        _check(report, "python:prompt", memory.system_prompt)
        _refused(report, "python:save", lambda: memory.save("Lunch is at noon " * 40), refusal)


def _cli(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "memdir", "--home", str(home),
               "--set", "embeddings.provider=hash", *args]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    return subprocess.run(command, env=env, input=stdin, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip


def _cli_reads(home: Path, report: ReadsReport, refusal: str) -> None:
    def out(*args: str) -> str:
        done = _cli(home, *args)
        if done.returncode != 0:
            raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[-300:]}")
        return done.stdout

    _check(report, "cli:search", lambda: out("search", "team meets"))
    _check(report, "cli:recall", lambda: out("recall", QUERY))
    note = next((home / "workspace" / "memory").glob("????-??-??.md")).name
    _check(report, "cli:get", lambda: out("get", f"memory/{note}"))
    _check(report, "cli:prompt", lambda: out("prompt"))
    done = _cli(home, "files", "write", "memory/new.md", stdin="# New\n\ntext\n")
    if done.returncode == 1 and done.stderr.startswith("Error: ") and refusal in done.stderr:
        report.writes["cli:files write"] = done.stderr.strip()[:160]
    else:
        report.problems.append(f"cli:files write: exit {done.returncode}: {done.stderr[-300:]}")


def _mcp_tool(http: httpx.Client, name: str, arguments: dict[str, Any]) -> str:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "memdir-bench", "version": "1"}}}  # fmt: skip
    opened = http.post("/mcp", json=hello, headers=MCP_HEADERS)
    opened.raise_for_status()
    session = {**MCP_HEADERS, "Mcp-Session-Id": opened.headers.get("mcp-session-id", ""),
               "Mcp-Protocol-Version": PROTOCOL}  # fmt: skip
    http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
              headers=session)  # fmt: skip
    if name == "system_prompt":
        call = {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": name}}
    else:
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}  # fmt: skip
    answer = http.post("/mcp", json=call, headers=session)
    http.delete("/mcp", headers=session)
    if answer.status_code != 200 or '"isError":true' in answer.text.replace(" ", ""):
        raise RuntimeError(f"MCP {name}: {answer.status_code} {answer.text[:300]}")
    return answer.text


def _server_reads(server: RestServer, report: ReadsReport, status: int) -> None:
    with server.client() as http:

        def rest(path: str, **params: str) -> str:
            answer = http.get(path, params=params)
            if answer.status_code != 200:
                raise RuntimeError(f"{answer.status_code}: {answer.text[:300]}")
            return answer.text

        _check(report, "rest:search", lambda: rest("/api/v1/search", query="team meets"))
        _check(report, "rest:recall", lambda: rest("/api/v1/facts/recall", query=QUERY))
        note = next((server.home / "workspace" / "memory").glob("????-??-??.md")).name
        _check(report, "rest:get", lambda: rest(f"/api/v1/files/memory/{note}"))
        _check(report, "rest:prompt", lambda: rest("/api/v1/prompt"))
        _check(report, "mcp:search", lambda: _mcp_tool(http, "memory_search", {"query": "team"}))
        _check(report, "mcp:recall", lambda: _mcp_tool(http, "memory_recall", {"query": QUERY}))
        _check(report, "mcp:get", lambda: _mcp_tool(http, "memory_get", {"path": f"memory/{note}"}))
        _check(report, "mcp:prompt", lambda: _mcp_tool(http, "system_prompt", {}))
        writes = {
            "rest:PUT file": ("PUT", "/api/v1/files/memory/new.md", {"content": "# New\n\nx\n"}),
            "rest:POST fact": ("POST", "/api/v1/facts", {"content": "Lunch is at noon " * 40}),
        }
        for name, (method, url, body) in writes.items():
            answer = http.request(method, url, json=body)
            title = answer.json().get("title", "") if answer.content else ""
            if answer.status_code == status:
                report.writes[name] = f"{answer.status_code} {title}"
            else:
                report.problems.append(f"{name}: {answer.status_code} {answer.text[:300]}")


def _recovers(server: RestServer, report: ReadsReport) -> None:
    with server.client() as http:
        saved = http.post("/api/v1/facts", json={"content": "The office plant is a ficus"})
        found = http.get("/api/v1/search", params={"query": "office plant ficus"})
    report.reads["rest:write once there is space"] = saved.status_code == 201
    report.reads["rest:search finds it"] = "ficus" in found.text
    if saved.status_code != 201 or "ficus" not in found.text:
        report.problems.append(f"after freeing space: {saved.status_code} {saved.text[:200]}; "
                               f"{found.status_code} {found.text[:200]}")  # fmt: skip


def _fill(folder: Path) -> None:
    """Fill ``folder``'s disk to the last byte."""
    fd = os.open(folder / "filler.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)


def child(folder: Path, out: Path, condition: str, method: str) -> None:
    """Runs inside the namespace (or as a user file modes stop); writes the report."""
    report = ReadsReport(condition, method)
    home = folder / "home"
    if condition == "full_disk":
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES}", "tmpfs",
                        str(folder)], check=True)  # fmt: skip
        seed(home)
        _fill(folder)
        with Memory.open(home, embedder=HashEmbedder()) as memory:  # a failed write first
            with contextlib.suppress(DiskFullError):
                memory.append_daily("- " + "filler text " * 4_300)
            (memory.workspace.root / "memory" / "projects.md").touch()  # changed, not indexed
    elif method == "bind":
        subprocess.run(["mount", "--bind", str(home), str(home)], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(home)], check=True)
    refusal = DiskFullError if condition == "full_disk" else ReadOnlyHomeError
    _python(home, report, refusal)
    _cli_reads(home, report, "disk is full" if condition == "full_disk" else "read-only")
    try:
        server = start_rest_server(home, log_dir=out.parent)  # not on the full disk
    except RuntimeError as exc:  # the server did not start: none of its reads answered
        report.problems.append(f"serve: {str(exc)[-300:]}")
        report.reads.update({f"{i}:{r}": False for i in ("rest", "mcp") for r in READS})
        out.write_text(json.dumps(asdict(report)), encoding="utf-8")
        return
    try:
        log = server.log.read_text(errors="replace")
        if condition == "read_only" and log.count(READ_ONLY_LINE) != 1:
            report.problems.append(f"serve did not say the home is read-only once: {log[-500:]}")
        _server_reads(server, report, 507 if condition == "full_disk" else 503)
        if condition == "full_disk":  # space again: the same server writes and finds it
            (folder / "filler.bin").unlink()
            _recovers(server, report)
    finally:
        server.stop()
    out.write_text(json.dumps(asdict(report)), encoding="utf-8")


def _read_only_by_modes(home: Path, writable: bool) -> None:
    """File modes that stop a user other than root (and give them back)."""
    for path in [home, *home.rglob("*")]:
        mode = path.stat().st_mode
        write = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
        path.chmod(mode | stat.S_IWUSR if writable else mode & ~write)


def run_readable(workdir: Path, condition: str) -> ReadsReport:
    """Run ``condition`` (``read_only`` or ``full_disk``) in a child process."""
    folder = workdir / condition
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    out = workdir / f"{condition}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    command = [sys.executable, "-m", "memdir.bench.readable", str(folder), str(out), condition]
    unshare = shutil.which("unshare")
    namespaces = (
        unshare is not None
        and subprocess.run(
            [unshare, "--map-root-user", "--mount", "true"], capture_output=True, check=False
        ).returncode
        == 0
    )
    if condition == "read_only":
        seed(folder / "home")
    if namespaces:
        assert unshare is not None
        method = "tmpfs" if condition == "full_disk" else "bind"
        command = [unshare, "--map-root-user", "--mount", *command, method]
    elif condition == "read_only" and os.geteuid() != 0:
        method = "chmod"
        command = [*command, method]
        _read_only_by_modes(folder / "home", writable=False)
    else:
        why = "no user namespaces (unshare --map-root-user failed)"
        if condition == "read_only":
            why += " and running as root, whom file modes do not stop"
        return ReadsReport(condition, f"skipped: {why}")
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600,
                              check=False)  # fmt: skip
    finally:
        if method == "chmod":
            _read_only_by_modes(folder / "home", writable=True)
    if done.returncode != 0:
        raise RuntimeError(f"the {condition} run failed ({done.returncode}): {done.stderr[-3000:]}")
    return ReadsReport(**json.loads(out.read_text(encoding="utf-8")))


if __name__ == "__main__":
    child(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4])
