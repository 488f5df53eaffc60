"""Load: N processes x M threads mixing appends, saves, searches, syncs and file writes.

Run: .venv/bin/python benchmarks/load.py [--processes 4] [--threads 4] [--seconds 10]
     [--home DIR] [--json]

Every process opens one ``Memory`` on the same home (as a server does) and its
threads share it; each thread runs a random mix of operations until the time is
up. Afterwards the parent checks that nothing was lost: every append and every
saved fact that returned is in the daily note exactly once, and every file a
thread wrote holds the last content it wrote. It prints ops/s and p50/p95
latency per operation type, the errors (``database is locked`` counted apart)
and the lost writes; the exit status is 1 when either is non-zero.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from memdir.embeddings.base import HashEmbedder
from memdir.errors import MemdirError
from memdir.memory import Memory

MIX = (("append", 40), ("save", 20), ("search", 25), ("sync", 8), ("write", 7))
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]


def _pick(rng: random.Random) -> str:
    return rng.choices([name for name, _ in MIX], weights=[w for _, w in MIX])[0]


class ThreadLog:
    """What one thread did: latencies per op, errors, and what it wrote."""

    def __init__(self) -> None:
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.appends: list[str] = []
        self.saves: list[str] = []
        self.files: dict[str, str] = {}


def _run_op(memory: Memory, op: str, tag: str, n: int, rng: random.Random, log: ThreadLog) -> None:
    words = " ".join(rng.sample(WORDS, 3))
    if op == "append":
        text = f"load append {tag}-{n} about {words}"
        memory.append_daily(text)
        log.appends.append(text)
    elif op == "save":
        text = f"Load fact {tag}-{n}: the team keeps {words} {rng.randrange(10**9)}."
        outcome = memory.save(text)
        if outcome.fact is not None and outcome.action != "none":
            log.saves.append(text)
    elif op == "search":
        memory.search(f"{words} {tag}", max_results=6)
    elif op == "sync":
        memory.sync()
    else:
        path = f"memory/load/{tag}.md"
        content = f"# {tag}\n\nrevision {n} about {words}\n"
        memory.write_file(path, content)
        log.files[path] = content


def _thread(memory: Memory, tag: str, deadline: float, seed: int, log: ThreadLog) -> None:
    rng = random.Random(seed)
    n = 0
    while time.monotonic() < deadline:
        op = _pick(rng)
        started = time.perf_counter()
        try:
            _run_op(memory, op, tag, n, rng, log)
        except MemdirError as exc:  # boundary: count it, keep going
            log.errors.append(f"{op}: {type(exc).__name__}: {exc}")
        log.latencies[op].append(time.perf_counter() - started)
        n += 1


def worker(home: Path, process: int, threads: int, seconds: float, out: Path) -> None:
    """One load process: ``threads`` threads sharing one Memory; results as JSON to ``out``."""
    memory = Memory.open(home, embedder=HashEmbedder(), chat_model=None)
    deadline = time.monotonic() + seconds
    logs = [ThreadLog() for _ in range(threads)]
    pool = [
        threading.Thread(
            target=_thread, args=(memory, f"p{process}t{t}", deadline, process * 1000 + t, logs[t])
        )
        for t in range(threads)
    ]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    memory.close()
    merged: dict[str, Any] = {"latencies": defaultdict(list), "errors": [], "appends": [],
                              "saves": [], "files": {}}  # fmt: skip
    for log in logs:
        for op, values in log.latencies.items():
            merged["latencies"][op].extend(values)
        merged["errors"] += log.errors
        merged["appends"] += log.appends
        merged["saves"] += log.saves
        merged["files"].update(log.files)
    out.write_text(json.dumps(merged), encoding="utf-8")


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def check_lost(home: Path, results: list[dict[str, Any]]) -> list[str]:
    """Writes that returned but are not on disk (or are there twice)."""
    root = home / "workspace"
    note_lines: list[str] = []
    for note in sorted((root / "memory").glob("*.md")):
        note_lines += note.read_text(encoding="utf-8").splitlines()
    counts: dict[str, int] = defaultdict(int)
    for line in note_lines:
        counts[line] += 1
    note_text = "\n".join(note_lines)
    lost = [f"append {a!r}" for r in results for a in r["appends"] if counts[a] != 1]
    lost += [f"save {s!r}" for r in results for s in r["saves"] if s not in note_text]
    for r in results:
        for path, content in r["files"].items():
            if (root / path).read_text(encoding="utf-8") != content:
                lost.append(f"file {path}")
    return lost


def run_load(home: Path, processes: int, threads: int, seconds: float) -> dict[str, Any]:
    """Start the processes, wait, check for lost writes; return the figures."""
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.init()
        memory.sync()
    outs = [home / f"load-{p}.json" for p in range(processes)]
    started = time.perf_counter()
    children = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                str(p),
                "--home",
                str(home),
                "--threads",
                str(threads),
                "--seconds",
                str(seconds),
                "--out",
                str(outs[p]),
            ]
        )
        for p in range(processes)
    ]
    failed = [c.args for c in children if c.wait(timeout=seconds + 120) != 0]
    elapsed = time.perf_counter() - started
    if failed:
        raise SystemExit(f"load worker(s) failed: {failed}")
    results = [json.loads(out.read_text(encoding="utf-8")) for out in outs]
    latencies: dict[str, list[float]] = defaultdict(list)
    for r in results:
        for op, values in r["latencies"].items():
            latencies[op].extend(values)
    errors = [e for r in results for e in r["errors"]]
    return {
        "processes": processes,
        "threads": threads,
        "seconds": round(elapsed, 2),
        "ops": {
            op: {
                "count": len(v),
                "per_s": round(len(v) / seconds, 1),
                "p50_ms": round(1000 * _percentile(v, 0.50), 2),
                "p95_ms": round(1000 * _percentile(v, 0.95), 2),
            }
            for op, v in sorted(latencies.items())
        },
        "total_per_s": round(sum(len(v) for v in latencies.values()) / seconds, 1),
        "errors": len(errors),
        "locked_errors": sum("locked" in e for e in errors),
        "error_samples": errors[:5],
        "lost": check_lost(home, results),
        "date": dt.date.today().isoformat(),
    }


def print_figures(figures: dict[str, Any]) -> None:
    print(f"load: {figures['processes']} processes x {figures['threads']} threads, "
          f"{figures['seconds']} s wall")  # fmt: skip
    print(f"{'op':8} {'count':>7} {'ops/s':>8} {'p50 ms':>8} {'p95 ms':>8}")
    for op, row in figures["ops"].items():
        print(f"{op:8} {row['count']:>7} {row['per_s']:>8} {row['p50_ms']:>8} {row['p95_ms']:>8}")
    print(f"total ops/s={figures['total_per_s']} errors={figures['errors']} "
          f"locked={figures['locked_errors']} lost={len(figures['lost'])}")  # fmt: skip
    for sample in figures["error_samples"]:
        print(f"  error: {sample}")
    for item in figures["lost"][:10]:
        print(f"  lost: {item}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--home", type=Path, help="default: a temporary folder")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.home, args.worker, args.threads, args.seconds, args.out)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp) / "home"
        figures = run_load(home, args.processes, args.threads, args.seconds)
    if args.json:
        print(json.dumps(figures))
    else:
        print_figures(figures)
    return 1 if figures["errors"] or figures["lost"] else 0


if __name__ == "__main__":
    sys.exit(main())
