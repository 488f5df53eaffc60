"""``memdir bench agents``: thousands of agent ids through REST and MCP against ``memdir serve``.

A red-team run found that every distinct ``?agent=`` kept a ``Memory`` open for good
(a dozen files each): with the usual ``ulimit -n 1024``, 83 ids made every request
fail and the server stopped accepting connections. This benchmark starts ``memdir
serve`` (the CLI, the configured embedder unless told otherwise) under a file limit
(default 1,024) and, from ``threads`` client threads, sends each of ``agents``
distinct agent ids:

* REST, admin token: write a note (``PUT /files/memory/bench.md?agent=ID``), search it;
* MCP over HTTP: open a session for the agent (every tenth agent with a token of its
  own, the others with the admin token and ``?agent=ID``), call ``memory_search``,
  close the session (``DELETE``);
* and the refusals that must happen: every 50th agent's token asking for another
  agent (403), an invalid agent id (400).

With ``rounds`` > 1 the later rounds visit the same agents again (in another order)
without writing: memory that grows there is held per visit, not per note indexed.
With ``writes=False`` no agent writes at all (its searches find nothing): memory that
grows then is held per agent id, not per note.

It samples the server's resident memory and open files every ``sample_every`` agents
and prints them with the request counts, unexpected errors (target 0), expected
refusals and latencies. ``max_open_workspaces`` passes the setting to the server
(a huge value shows what happens without the bound).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from memdir.access import AccessTokens
from memdir.bench.rest_server import free_port

Progress = Callable[[str], None]
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PROTOCOL = "2025-06-18"
OWN_TOKEN_EVERY = 10  # every tenth agent uses a token of its own
GIVE_UP_AFTER = 50  # errors: the server is unusable; stop instead of timing out for hours
SAMPLE_SECONDS = 10.0  # sample at least this often, whatever the progress
REFUSAL_EVERY = 50  # every 50th agent also tries what must be refused


@dataclass
class AgentsReport:
    """What ``run_agents`` measured (see the module docstring)."""

    agents: int
    threads: int
    file_limit: int
    max_open_workspaces: int | None
    rounds: int = 1
    writes: bool = True
    seconds: float = 0.0
    requests: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    refused_as_expected: int = 0
    first_error_at_visit: int | None = None
    latency_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    samples: list[dict[str, float]] = field(default_factory=list)
    server_alive: bool = True

    @property
    def wrong(self) -> int:
        return self.errors + (0 if self.server_alive else 1)


class _Client:
    """One thread's REST and MCP calls, counted and timed."""

    def __init__(self, url: str, admin: str, report: AgentsReport, lock: threading.Lock) -> None:
        self.url = url
        self.admin = admin
        self.report = report
        self.lock = lock
        self.http = httpx.Client(base_url=url, timeout=15)
        self.times: dict[str, list[float]] = defaultdict(list)
        self.expect_notes = True
        self.visits: Callable[[], int] = lambda: 0

    def call(self, kind: str, method: str, path: str, token: str, expect: int = 200,
             **kwargs: Any) -> httpx.Response | None:  # fmt: skip
        headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
        started = time.perf_counter()
        try:
            answer = self.http.request(method, path, headers=headers, **kwargs)
        except httpx.HTTPError as exc:
            self._error(f"{kind}: {type(exc).__name__}: {exc}")
            return None
        self.times[kind].append((time.perf_counter() - started) * 1000)
        with self.lock:
            self.report.requests[kind] = self.report.requests.get(kind, 0) + 1
        if answer.status_code != expect:
            self._error(f"{kind}: {answer.status_code} {answer.text[:200]}")
            return None
        if expect >= 400:
            with self.lock:
                self.report.refused_as_expected += 1
        return answer

    def _error(self, text: str) -> None:
        with self.lock:
            self.report.errors += 1
            if self.report.first_error_at_visit is None:
                self.report.first_error_at_visit = self.visits()
            if len(self.report.error_samples) < 10:
                self.report.error_samples.append(text)

    def agent(self, agent: str, token: str | None, other: str, write: bool = True) -> None:
        params = {"agent": agent}
        body = {"content": f"# Bench\n\n- {agent} keeps notes about benchmark {agent[1:]}\n"}
        if write:
            self.call("rest_write", "PUT", "/api/v1/files/memory/bench.md", self.admin,
                      params=params, json=body)  # fmt: skip
        self.call("rest_search", "GET", "/api/v1/search", self.admin,
                  params={**params, "query": "benchmark notes"})  # fmt: skip
        self.mcp(agent, token)
        if token is not None and int(agent[1:]) % REFUSAL_EVERY == 0:
            self.call("refused_other_agent", "GET", "/api/v1/files", token, expect=403,
                      params={"agent": other})  # fmt: skip
            self.call("refused_invalid_id", "GET", "/api/v1/files", self.admin, expect=400,
                      params={"agent": f"Bad!{agent}"})  # fmt: skip

    def mcp(self, agent: str, token: str | None) -> None:
        params = {} if token else {"agent": agent}
        bearer = token or self.admin
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "memdir-bench", "version": "1"}}}  # fmt: skip
        opened = self.call("mcp_initialize", "POST", "/mcp", bearer, params=params, json=hello,
                           headers=MCP_HEADERS)  # fmt: skip
        if opened is None:
            return
        session = {**MCP_HEADERS, "Mcp-Session-Id": opened.headers.get("mcp-session-id", ""),
                   "Mcp-Protocol-Version": PROTOCOL}  # fmt: skip
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.call("mcp_initialized", "POST", "/mcp", bearer, expect=202, params=params,
                  json=note, headers=session)  # fmt: skip
        search = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "memory_search", "arguments": {"query": "benchmark notes"}}}  # fmt: skip
        answer = self.call("mcp_tool", "POST", "/mcp", bearer, params=params, json=search,
                           headers=session)  # fmt: skip
        if answer is not None and self.expect_notes and agent not in answer.text:
            self._error(f"mcp_tool: {agent}'s note not found: {answer.text[:200]}")
        self.call("mcp_close", "DELETE", "/mcp", bearer, params=params, headers=session)


def run_agents(
    workdir: Path,
    agents: int = 2000,
    threads: int = 4,
    file_limit: int = 1024,
    max_open_workspaces: int | None = None,
    embedder: str | None = None,
    sample_every: int = 100,
    rounds: int = 1,
    writes: bool = True,
    progress: Progress | None = None,
) -> AgentsReport:
    """Run the benchmark on a fresh home under ``workdir``; return the figures."""
    say = progress or (lambda _: None)
    home = workdir / "home"
    report = AgentsReport(agents, threads, file_limit, max_open_workspaces, rounds, writes)
    ids = [f"a{number:05d}" for number in range(agents)]
    store = AccessTokens(home)
    tokens = {agent: store.create(agent, "bench")[0] for agent in ids[::OWN_TOKEN_EVERY]}
    say(f"{len(tokens)} agent tokens created; starting memdir serve (ulimit -n {file_limit})")
    server, url = _start_server(home, file_limit, max_open_workspaces, embedder, workdir)
    admin = (home / "api-token").read_text(encoding="utf-8").strip()
    lock = threading.Lock()
    clients = [_Client(url, admin, report, lock) for _ in range(threads)]
    for client in clients:
        client.expect_notes = writes
        client.visits = lambda: done[0]
    done = [0]
    started = time.perf_counter()

    def work(index: int) -> None:
        for round_ in range(rounds):
            order = range(index, agents, threads)
            for position in order if round_ % 2 == 0 else reversed(order):
                if report.errors >= GIVE_UP_AFTER:
                    return
                agent = ids[position]
                other = ids[(position + 1) % agents]
                clients[index].agent(agent, tokens.get(agent), other, write=writes and not round_)
                with lock:
                    done[0] += 1

    workers = [threading.Thread(target=work, args=(n,), daemon=True) for n in range(threads)]
    for worker in workers:
        worker.start()
    next_sample, sampled_at = sample_every, time.monotonic()
    report.samples.append({"visits": 0, **_usage(server.pid)})
    while any(worker.is_alive() for worker in workers):
        time.sleep(0.2)
        finished = not any(worker.is_alive() for worker in workers)
        due = time.monotonic() - sampled_at >= SAMPLE_SECONDS
        if done[0] >= next_sample or finished or due:
            report.samples.append({"visits": done[0], **_usage(server.pid)})
            say(f"{done[0]} visits: {report.samples[-1]} errors={report.errors}")
            sampled_at = time.monotonic()
            while next_sample <= done[0]:
                next_sample += sample_every
        if server.poll() is not None:
            report.server_alive = False
            break
    report.seconds = round(time.perf_counter() - started, 1)
    report.server_alive = report.server_alive and server.poll() is None
    times: dict[str, list[float]] = defaultdict(list)
    for client in clients:
        for kind, values in client.times.items():
            times[kind].extend(values)
    report.latency_ms = {kind: _latency(values) for kind, values in sorted(times.items())}
    for client in clients:
        client.http.close()
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    return report


def _start_server(home: Path, file_limit: int, max_open: int | None, embedder: str | None,
                  workdir: Path) -> tuple[subprocess.Popen[bytes], str]:  # fmt: skip
    port = free_port()
    command = [sys.executable, "-m", "memdir", "--home", str(home)]
    if max_open is not None:
        command += ["--set", f"server.max_open_workspaces={max_open}"]
    if embedder is not None:
        command += ["--set", f"embeddings.provider={embedder}"]
    command += ["serve", "--port", str(port)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}

    def limit_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (file_limit, file_limit))

    with (workdir / "server.log").open("wb") as log:  # the server keeps its own copy
        server = subprocess.Popen(command, env=env, stdout=log, stderr=log, preexec_fn=limit_files)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"memdir serve exited: {(workdir / 'server.log').read_text()}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return server, url
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("memdir serve did not answer /health within 120 s")


def _usage(pid: int) -> dict[str, float]:
    """The server's resident memory (MB) and open files, from ``/proc``."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
        rss = next(int(row.split()[1]) for row in status.splitlines() if row.startswith("VmRSS:"))
        files = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration):
        return {"rss_mb": 0.0, "open_files": 0}
    return {"rss_mb": round(rss / 1024, 1), "open_files": files}


def _latency(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "count": len(ordered),
        "p50": round(statistics.median(ordered), 1),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
    }


def as_json(report: AgentsReport) -> str:
    body = {**report.__dict__, "wrong": report.wrong}
    return json.dumps(body, indent=1)
