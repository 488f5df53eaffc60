"""Benchmark: what versioning (docs/history.md) adds to a save, p50/p95.

Run: .venv/bin/python benchmarks/history_cost.py [--saves 200] [--rounds 2] [--hash]
     .venv/bin/python benchmarks/history_cost.py --backends   (git command vs dulwich)

Saves go through ``Memory.save`` (embedding, the fact, the day's note, its indexing, and
with history on its commit) into a fresh home per run; runs with history on and off
alternate, so both see the same machine load. ``--hash`` uses the hash embedder instead
of the local model. ``--backends`` times ``git add`` + ``git commit`` of one file against
dulwich's ``porcelain.add`` + ``commit`` on a 200-file workspace (dulwich if installed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from memdir.embeddings.base import Embedder, HashEmbedder
from memdir.memory import Memory

FACTS = [
    "The user's {n}th project is called Atlas-{n} and ships on a Friday.",
    "Decision {n}: the team keeps the staging database on PostgreSQL {n}.",
    "The user prefers meeting number {n} in the morning, not after lunch.",
]


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def run_saves(saves: int, history: bool, embedder: Embedder | None) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        overrides = {"history": {"enabled": history}}
        with Memory.open(tmp, overrides=overrides, embedder=embedder, chat_model=None) as memory:
            memory.init()
            memory.save("The benchmark starts with this fact.")  # opens the stores
            timings = []
            for n in range(saves):
                started = time.perf_counter()
                memory.save(FACTS[n % len(FACTS)].format(n=n))
                timings.append(time.perf_counter() - started)
            started = time.perf_counter()
            memory.history.flush()  # the commits run off the write path: how far behind?
            if history:
                lag = (time.perf_counter() - started) * 1000
                print(f"  the last version was committed {lag:.0f} ms after the last save")
        if history:
            count = subprocess.run(
                ["git", "-C", tmp, "rev-list", "--count", "HEAD"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            assert int(count) >= saves, f"{count} versions for {saves} saves"
    return timings


def saves_benchmark(saves: int, rounds: int, embedder: Embedder | None) -> None:
    results: dict[bool, list[float]] = {True: [], False: []}
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    for round_ in range(rounds):
        for history in (False, True) if round_ % 2 == 0 else (True, False):
            timings = run_saves(saves, history, embedder)
            results[history].extend(timings)
            p50, p95 = percentiles(timings)
            label = "on " if history else "off"
            print(f"round {round_ + 1} history {label}: save p50 {p50:6.1f} ms  p95 {p95:6.1f} ms")
    off, on = percentiles(results[False]), percentiles(results[True])
    print(f"all history off: save p50 {off[0]:6.1f} ms  p95 {off[1]:6.1f} ms")
    print(f"all history on:  save p50 {on[0]:6.1f} ms  p95 {on[1]:6.1f} ms")
    print(f"versioning adds: p50 {on[0] - off[0]:+.1f} ms ({on[0] / off[0] - 1:+.0%}), "
          f"p95 {on[1] - off[1]:+.1f} ms ({on[1] / off[1] - 1:+.0%})")  # fmt: skip
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


def backends_benchmark(commits: int = 60) -> None:
    def workspace(root: Path) -> Path:
        notes = root / "workspace" / "memory"
        notes.mkdir(parents=True)
        for i in range(200):
            (notes / f"2026-01-{i:03d}.md").write_text("- a note line\n" * 40)
        memory = root / "workspace" / "MEMORY.md"
        memory.write_text("# Memory\n")
        return memory

    def git_cli(root: Path) -> list[float]:
        memory = workspace(root)
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@localhost",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@localhost"}  # fmt: skip

        def git(*args: str) -> None:
            subprocess.run(
                ["git", "-C", str(root), *args], check=True, capture_output=True, env=env
            )

        git("init", "-q")
        git("add", "-A")
        git("commit", "-qm", "start")
        timings = []
        for i in range(commits):
            memory.write_text(memory.read_text() + f"- line {i}\n")
            started = time.perf_counter()
            git("add", "-A", "--", "workspace/MEMORY.md")
            git("commit", "-q", "--no-verify", "-m", f"save {i}")
            timings.append(time.perf_counter() - started)
        return timings

    def dulwich(root: Path) -> list[float] | None:
        try:
            from dulwich import porcelain  # type: ignore[import-not-found]
            from dulwich.repo import Repo  # type: ignore[import-not-found]
        except ImportError:
            return None
        memory = workspace(root)
        repo = Repo.init(str(root))
        who = b"b <b@localhost>"
        porcelain.add(repo, [str(root / "workspace")])
        porcelain.commit(repo, message=b"start", author=who, committer=who)
        timings = []
        for i in range(commits):
            memory.write_text(memory.read_text() + f"- line {i}\n")
            started = time.perf_counter()
            porcelain.add(repo, [str(memory)])
            porcelain.commit(repo, message=f"save {i}".encode(), author=who, committer=who)
            timings.append(time.perf_counter() - started)
        return timings

    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        p50, p95 = percentiles(git_cli(Path(a)))
        print(f"git command add+commit: p50 {p50:.1f} ms  p95 {p95:.1f} ms")
        timings = dulwich(Path(b))
        if timings is None:
            print("dulwich: not installed (pip install dulwich to compare)")
        else:
            p50, p95 = percentiles(timings)
            print(f"dulwich add+commit:     p50 {p50:.1f} ms  p95 {p95:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hash", action="store_true", help="the hash embedder, not the model")
    parser.add_argument("--backends", action="store_true", help="git command vs dulwich")
    args = parser.parse_args()
    if args.backends:
        backends_benchmark()
        return
    embedder = HashEmbedder() if args.hash else Memory.open(tempfile.mkdtemp()).embedder
    saves_benchmark(args.saves, args.rounds, embedder)


if __name__ == "__main__":
    main()
