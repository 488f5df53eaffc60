"""Footprint: one-shot `memdir search` time and memory, `memdir serve` search latency and RSS.

Run: .venv/bin/python benchmarks/footprint.py [--notes 200] [--minutes 2] [--home DIR] [--json]

Builds a home of ``--notes`` generated daily notes (``memory/YYYY-MM-DD.md``, about
1,500 tokens each, from ``memdir.bench.notes``) and indexes it with the real local
model (minutes on 2 cores; pass ``--home`` to reuse one). Then, all through the
installed ``memdir`` script, as a user runs it:

* one-shot: ``memdir search QUERY`` five times each with and without ``--no-sync``:
  wall time (median) and the child's peak RSS (``ru_maxrss`` from ``wait4``);
* server: ``memdir serve`` on a free port; ``GET /api/v1/search`` p50/p95 over 200
  generated questions (after 5 untimed), and the server's RSS (VmRSS) then;
* mixed use for ``--minutes`` (at ``--rate`` operations a second, default: as fast
  as the server answers): searches, fact saves, recalls, file writes, fact
  listings and recent activity over REST in a loop; the server's RSS every 10 s,
  reported as the first, the largest and the last sample and the growth per
  minute over the second half (a leak shows as steady growth).

Targets (issue: "the first hour"): one-shot <= 0.5 s and <= 250 MB; serve p50
<= 15 ms; server RSS <= 300 MB after an hour of mixed use, without growth.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx

from memdir.bench.notes import render_note, sample_queries

MEMDIR = str(Path(sys.executable).parent / "memdir")
TARGETS = {
    "one_shot_s": 0.5,
    "one_shot_rss_mb": 250,
    "serve_p50_ms": 15,
    "serve_rss_mb_after_use": 300,
}


def make_home(home: Path, notes: int) -> float:
    """Write the notes and index them with the real model; return the index time (s)."""
    memory = home / "workspace" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    first = date(2026, 1, 1)
    for offset in range(notes):
        day = first + timedelta(days=offset)
        (memory / f"{day.isoformat()}.md").write_text(render_note(day, rng), encoding="utf-8")
    subprocess.run([MEMDIR, "--home", str(home), "init"], check=True, capture_output=True)
    started = time.perf_counter()
    subprocess.run([MEMDIR, "--home", str(home), "index", "sync"], check=True, capture_output=True)
    return time.perf_counter() - started


def run_measured(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{command} exited with {process.returncode}")
    return wall, usage.ru_maxrss / 1024


def one_shot(home: Path, runs: int = 5) -> dict[str, Any]:
    query = "what did we decide about the database migration"
    out: dict[str, Any] = {}
    for name, extra in (("search", []), ("search_no_sync", ["--no-sync"])):
        samples = [run_measured([MEMDIR, "--home", str(home), "search", query, *extra])
                   for _ in range(runs)]  # fmt: skip
        out[name] = {
            "wall_s_median": round(statistics.median(s[0] for s in samples), 3),
            "wall_s_min": round(min(s[0] for s in samples), 3),
            "rss_mb_max": round(max(s[1] for s in samples), 1),
        }
    help_wall, help_rss = run_measured([MEMDIR, "--help"])
    out["help"] = {"wall_s": round(help_wall, 3), "rss_mb": round(help_rss, 1)}
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


class Server:
    def __init__(self, home: Path) -> None:
        self.port = free_port()
        self.log = (home.parent / f"serve-{self.port}.log").open("wb")
        self.process = subprocess.Popen(
            [MEMDIR, "--home", str(home), "serve", "--port", str(self.port)],
            stdout=self.log, stderr=self.log,
        )  # fmt: skip
        self.url = f"http://127.0.0.1:{self.port}"
        token = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    token = (home / "api-token").read_text().strip()
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        if not token:
            self.stop()
            raise RuntimeError("memdir serve did not start within 60 s")
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        )

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def serve_latency(server: Server, queries: list[str]) -> dict[str, Any]:
    for query in queries[:5]:
        server.client.get("/api/v1/search", params={"query": query}).raise_for_status()
    times = []
    for query in queries:
        started = time.perf_counter()
        server.client.get("/api/v1/search", params={"query": query}).raise_for_status()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "searches": len(times),
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
        "rss_mb": round(rss_mb(server.process.pid), 1),
    }


def mixed_use(
    server: Server, minutes: float, queries: list[str], rate: float = 0.0
) -> dict[str, Any]:
    rng = random.Random(3)
    api = server.client
    counts: dict[str, int] = {}
    samples: list[tuple[float, float]] = []
    started = time.monotonic()
    next_sample = started
    serial = 0
    while (now := time.monotonic()) - started < minutes * 60:
        if now >= next_sample:
            samples.append(((now - started) / 60, rss_mb(server.process.pid)))
            next_sample += 10
        serial += 1
        roll = rng.random()
        if roll < 0.55:
            kind = "search"
            api.get("/api/v1/search", params={"query": rng.choice(queries)}).raise_for_status()
        elif roll < 0.70:
            kind = "save"
            text = f"Fact {serial}: {rng.choice(queries)} was settled by the team."
            api.post("/api/v1/facts", json={"content": text}).raise_for_status()
        elif roll < 0.80:
            kind = "recall"
            api.get("/api/v1/facts/recall", params={"query": rng.choice(queries)})
        elif roll < 0.90:
            kind = "write"
            body = {"content": f"# Scratch {serial}\n\n- {rng.choice(queries)}\n"}
            api.put(f"/api/v1/files/notes/scratch-{serial % 50}.md", json=body).raise_for_status()
        else:
            kind = "list"
            api.get("/api/v1/recent", params={"days": 1}).raise_for_status()
            api.get("/api/v1/facts").raise_for_status()
        counts[kind] = counts.get(kind, 0) + 1
        if rate > 0:  # an agent's pace rather than a flood
            time.sleep(max(0.0, started + serial / rate - time.monotonic()))
    samples.append(((time.monotonic() - started) / 60, rss_mb(server.process.pid)))
    half = [s for s in samples if s[0] >= samples[-1][0] / 2]
    growth = 0.0
    if len(half) >= 2 and half[-1][0] > half[0][0]:
        growth = (half[-1][1] - half[0][1]) / (half[-1][0] - half[0][0])
    return {
        "minutes": round(samples[-1][0], 1),
        "operations": counts,
        "rss_mb_first": round(samples[0][1], 1),
        "rss_mb_max": round(max(s[1] for s in samples), 1),
        "rss_mb_last": round(samples[-1][1], 1),
        "rss_mb_per_minute_second_half": round(growth, 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=200, help="daily notes in the home")
    parser.add_argument("--minutes", type=float, default=2.0, help="mixed use of the server")
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="operations per second in the mixed use (0: as fast as it answers)",
    )
    parser.add_argument("--home", type=Path, help="reuse (or create) this home")
    parser.add_argument("--json", action="store_true", help="print only the JSON")
    args = parser.parse_args(argv)
    scratch = None
    if args.home is None:
        scratch = Path(tempfile.mkdtemp(prefix="memdir-footprint-"))
        home = scratch / "home"
    else:
        home = args.home
    result: dict[str, Any] = {"notes": args.notes, "cpus": os.cpu_count(),
                              "load_average": os.getloadavg()}  # fmt: skip
    try:
        if not (home / "index" / "memdir.db").exists():
            result["index_s"] = round(make_home(home, args.notes), 1)
        result["one_shot"] = one_shot(home)
        server = Server(home)
        try:
            queries = sample_queries(200)
            result["serve"] = serve_latency(server, queries)
            result["mixed_use"] = mixed_use(server, args.minutes, queries, args.rate)
        finally:
            server.stop()
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    result["targets"] = TARGETS
    print(json.dumps(result, indent=1))
    if not args.json:
        shot, serve, use = result["one_shot"]["search"], result["serve"], result["mixed_use"]
        print(
            f"one-shot memdir search: {shot['wall_s_median']} s (target <= 0.5), "
            f"{shot['rss_mb_max']} MB (<= 250)\n"
            f"memdir serve search: p50 {serve['p50_ms']} ms (<= 15), p95 {serve['p95_ms']} ms\n"
            f"server RSS after {use['minutes']} min of mixed use: {use['rss_mb_last']} MB "
            f"(max {use['rss_mb_max']}, <= 300), {use['rss_mb_per_minute_second_half']} MB/min "
            "over the second half",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
