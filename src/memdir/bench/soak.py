"""A mixed read/write soak through REST: client processes against one ``memdir serve``.

The server runs as ``memdir serve`` would (hash embedder, the file watcher on).
``processes`` client processes with ``threads`` threads each send a random mix
for ``seconds``: fact saves (``POST /facts``), searches (``GET /search``, the
default freshness), file writes (``PUT``), edits (``PATCH``) and recalls.
Every so often a thread checks read-your-writes: it writes a file with a
unique word and searches for it at once; the search must find it.

Printed (and returned): per operation count, ops/s, p50/p95/p99 ms; errors
(any answer but the expected status, or a transport error); fresh-read misses;
acknowledged saves missing from the notes afterwards; the server's RSS
(sampled each second: at the start, the peak and at the end).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from memdir.bench.rest_server import RestServer, start_rest_server

MIX = (("search", 45), ("save", 25), ("write", 12), ("edit", 8), ("recall", 10))
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima", "mike", "november", "oscar", "papa")  # fmt: skip
FRESH_EVERY = 25  # one read-your-writes probe per this many operations of a thread


@dataclass
class SoakReport:
    """Figures of one soak run (see the module docstring)."""

    processes: int
    threads: int
    seconds: float
    ops: dict[str, dict[str, float]] = field(default_factory=dict)
    total_ops_per_s: float = 0.0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    fresh_probes: int = 0
    fresh_misses: int = 0
    saves_acknowledged: int = 0
    saves_lost: int = 0
    rss_mb: dict[str, float] = field(default_factory=dict)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


class _Thread:
    """One client thread: its own HTTP connection, latencies, errors and saved ids."""

    def __init__(self, url: str, token: str, tag: str, seed: int) -> None:
        self.http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120
        )
        self.tag = tag
        self.rng = random.Random(seed)
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.saved: list[str] = []
        self.probes = self.misses = 0

    def _call(self, op: str, method: str, url: str, ok: int, **kwargs: Any) -> httpx.Response:
        started = time.perf_counter()
        try:
            answer = self.http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            self.errors.append(f"{op}: {type(exc).__name__}: {exc}")
            raise
        finally:
            self.latencies[op].append(time.perf_counter() - started)
        if answer.status_code != ok:
            self.errors.append(f"{op}: {answer.status_code} {answer.text[:200]}")
        return answer

    def step(self, n: int) -> None:
        words = " ".join(self.rng.sample(WORDS, 3))
        op = self.rng.choices([m for m, _ in MIX], weights=[w for _, w in MIX])[0]
        path = f"/api/v1/files/memory/soak/{self.tag}.md"
        if n % FRESH_EVERY == FRESH_EVERY - 1:
            self._probe(n)
        elif op == "search":
            self._call(op, "GET", "/api/v1/search", 200, params={"query": f"{words} notes"})
        elif op == "recall":
            self._call(op, "GET", "/api/v1/facts/recall", 200, params={"query": words})
        elif op == "save":
            text = f"The {words} rota of team {self.tag} is week {n}"
            answer = self._call(op, "POST", "/api/v1/facts", 201, json={"content": text})
            if answer.status_code == 201 and answer.json().get("fact"):
                self.saved.append(answer.json()["fact"]["id"])
        elif op == "write":
            content = f"# {self.tag}\n\n- revision {n} about {words}\n- marker line\n"
            self._call(op, "PUT", path, 200, json={"content": content})
        else:
            body = {"old_text": "- marker line", "new_text": f"- marker line ({words})"}
            answer = self._call(op, "PATCH", path, 200, json=body)
            if answer.status_code in (404, 409):  # nothing to edit yet: not an error
                self.errors.pop()

    def _probe(self, n: int) -> None:
        """Write a unique word, then search for it at once: the hit must be there."""
        word = f"fresh{self.tag.replace('-', '')}x{n}"
        path = f"/api/v1/files/memory/soak/probe-{self.tag}.md"
        self._call("write", "PUT", path, 200, json={"content": f"# Probe\n\n- {word}\n"})
        answer = self._call("search", "GET", "/api/v1/search", 200, params={"query": word})
        self.probes += 1
        hits = answer.json().get("hits", []) if answer.status_code == 200 else []
        self.misses += not any(word in hit.get("text", "") for hit in hits)


def client(url: str, token: str, process: int, threads: int, seconds: float, out: Path) -> None:
    """One client process: ``threads`` threads until the time is up; results as JSON."""
    deadline = time.monotonic() + seconds
    workers = [_Thread(url, token, f"p{process}-t{t}", process * 100 + t) for t in range(threads)]

    def run(worker: _Thread) -> None:
        n = 0
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):  # counted as an error; go on
                worker.step(n)
            n += 1

    pool = [threading.Thread(target=run, args=(w,)) for w in workers]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    merged: dict[str, Any] = {"latencies": defaultdict(list), "errors": [], "saved": [],
                              "probes": 0, "misses": 0}  # fmt: skip
    for worker in workers:
        worker.http.close()
        for op, values in worker.latencies.items():
            merged["latencies"][op].extend(values)
        merged["errors"].extend(worker.errors)
        merged["saved"].extend(worker.saved)
        merged["probes"] += worker.probes
        merged["misses"] += worker.misses
    out.write_text(json.dumps(merged), encoding="utf-8")


def _sample_rss(server: RestServer, stop: threading.Event, samples: list[int]) -> None:
    while not stop.wait(1.0):
        samples.append(server.rss_bytes())


def run_soak(
    workdir: Path, *, processes: int = 3, threads: int = 4, seconds: float = 300.0
) -> SoakReport:
    """Seed a home under ``workdir``, start a server, run the clients, gather the figures."""
    home = workdir / "home"
    server = start_rest_server(home, watch=True)
    report = SoakReport(processes, threads, seconds)
    samples = [server.rss_bytes()]
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_rss, args=(server, stop, samples), daemon=True)
    try:
        _seed(server)
        token = (home / "api-token").read_text(encoding="utf-8").strip()
        outs = [workdir / f"client-{p}.json" for p in range(processes)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
        sampler.start()
        started = time.monotonic()
        procs = [_start_client(server.url, token, p, threads, seconds, outs[p], env)
                 for p in range(processes)]  # fmt: skip
        for proc in procs:
            proc.wait(timeout=seconds + 600)
        elapsed = time.monotonic() - started
        samples.append(server.rss_bytes())
        _gather(report, [json.loads(o.read_text(encoding="utf-8")) for o in outs], elapsed)
        report.saves_lost = _lost_saves(home, report, outs)
    finally:
        stop.set()
        server.stop()
    report.rss_mb = {
        "start": round(samples[0] / 2**20, 1),
        "peak": round(max(samples) / 2**20, 1),
        "end": round(samples[-1] / 2**20, 1),
    }
    return report


def _start_client(
    url: str, token: str, process: int, threads: int, seconds: float, out: Path,
    env: dict[str, str],
) -> subprocess.Popen[bytes]:  # fmt: skip
    command = [sys.executable, "-m", "memdir.bench.soak", url, token, str(process),
               str(threads), str(seconds), str(out)]  # fmt: skip
    return subprocess.Popen(command, env=env)


def _seed(server: RestServer) -> None:
    """A few notes to search, so hits are not all from the soak's own writes."""
    with server.client() as http:
        for day in range(1, 15):
            text = "\n".join(
                f"- {WORDS[(day + i) % len(WORDS)]} {WORDS[(day * i) % len(WORDS)]} project "
                f"notes, item {i}"
                for i in range(40)
            )
            http.put(f"/api/v1/files/memory/seed/2026-01-{day:02d}.md", json={"content": text})
        http.post("/api/v1/index/sync")


def _gather(report: SoakReport, results: list[dict[str, Any]], elapsed: float) -> None:
    latencies: dict[str, list[float]] = defaultdict(list)
    for result in results:
        for op, values in result["latencies"].items():
            latencies[op].extend(values)
        report.errors += len(result["errors"])
        report.error_samples.extend(result["errors"][:3])
        report.saves_acknowledged += len(result["saved"])
        report.fresh_probes += result["probes"]
        report.fresh_misses += result["misses"]
    for op, values in sorted(latencies.items()):
        report.ops[op] = {
            "count": len(values),
            "ops_per_s": round(len(values) / elapsed, 1),
            "p50_ms": round(_percentile(values, 0.50) * 1000, 1),
            "p95_ms": round(_percentile(values, 0.95) * 1000, 1),
            "p99_ms": round(_percentile(values, 0.99) * 1000, 1),
        }
    report.total_ops_per_s = round(sum(len(v) for v in latencies.values()) / elapsed, 1)


def _lost_saves(home: Path, report: SoakReport, outs: list[Path]) -> int:
    """Acknowledged fact ids that no daily note holds."""
    notes = "".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in (home / "workspace" / "memory").glob("*.md")
    )
    saved = [i for out in outs for i in json.loads(out.read_text(encoding="utf-8"))["saved"]]
    return sum(f"id={fact_id} " not in notes for fact_id in saved)


def as_dict(report: SoakReport) -> dict[str, Any]:
    return asdict(report)


if __name__ == "__main__":
    url_arg, token_arg, process_arg, threads_arg, seconds_arg, out_arg = sys.argv[1:]
    client(url_arg, token_arg, int(process_arg), int(threads_arg), float(seconds_arg),
           Path(out_arg))  # fmt: skip
