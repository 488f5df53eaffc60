"""Benchmark: does a save or an append cost more as the day's note grows? p50/p95 by size.

Run: .venv/bin/python benchmarks/daily_note_growth.py [--sizes 10,200,1000] [--writes 30]
         [--hash] [--no-history] [--profile 1000 [--sort tottime]]

For each size, a fresh home gets today's note with that many entries (written through the
workspace, then indexed by one sync, so the preparation is not timed), then ``--writes``
appends (``Memory.append_daily``, a 3-line entry) and as many saves (``Memory.save``, a
fact) are timed, alternating. Each write goes the whole write path: the note's lock, the
indexing of the note (chunks, FTS terms, vectors), the facts that follow it and the
version handed to the committer. The embedder is the configured one (the bundled local
model) unless ``--hash``. ``--profile N`` also prints where the time of the writes at size
N goes (cProfile, by cumulative time). The load average is printed: on a busy machine the
figures are noisy; compare sizes within one run.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import os
import pstats
import statistics
import tempfile
import time
from pathlib import Path

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
from memdir.workspace.daily import append_daily

TOPICS = ["deploy", "billing", "search", "onboarding", "the staging database", "the roadmap"]
PEOPLE = ["Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus"]


def entry(n: int) -> str:
    """A 3-line entry like an agent's log line; every one different."""
    topic, who = TOPICS[n % len(TOPICS)], PEOPLE[n % len(PEOPLE)]
    return (
        f"- {n // 60:02d}:{n % 60:02d} Talked with {who} about {topic} (item {n}).\n"
        f"  Decided to revisit {topic} on day {n % 28 + 1} and to keep notes in ticket T-{n}.\n"
        f"  Open question {n}: who owns {topic} after the move?"
    )


def fact(n: int) -> str:
    return f"The user's project number {n} is called Atlas-{n * 7} and ships on day {n % 28 + 1}."


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def run_size(
    size: int, writes: int, hash_embedder: bool, profile: bool, sort: str, history: bool
) -> None:
    embedder_args = {"embedder": HashEmbedder()} if hash_embedder else {}
    overrides = {"history": {"enabled": history}}
    with tempfile.TemporaryDirectory() as tmp:
        with Memory.open(tmp, chat_model=None, overrides=overrides, **embedder_args) as memory:  # type: ignore[arg-type]
            memory.init()
            root = memory.workspace.root
            today = dt.date.today()
            for n in range(size):
                append_daily(root, entry(n), today)
            started = time.perf_counter()
            memory.sync()
            memory.save("The benchmark starts with this fact.")  # opens the stores
            prepared = time.perf_counter() - started
            appends: list[float] = []
            saves: list[float] = []
            profiler = cProfile.Profile() if profile else None
            for n in range(writes):
                if profiler is not None:
                    profiler.enable()
                started = time.perf_counter()
                memory.append_daily(entry(size + n), dt.datetime.now())
                appends.append(time.perf_counter() - started)
                started = time.perf_counter()
                memory.save(fact(n))
                saves.append(time.perf_counter() - started)
                if profiler is not None:
                    profiler.disable()
            lines = (Path(root) / f"memory/{today.isoformat()}.md").read_text().count("\n")
            memory.history.flush()
        a50, a95 = percentiles(appends)
        s50, s95 = percentiles(saves)
        print(
            f"{size:5d} entries ({lines:5d} lines, prepared in {prepared:5.1f} s): "
            f"append p50 {a50:7.1f} ms p95 {a95:7.1f} ms | "
            f"save p50 {s50:7.1f} ms p95 {s95:7.1f} ms  (load {os.getloadavg()[0]:.1f})"
        )
        if profiler is not None:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats(sort).print_stats(45)
            print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10,200,1000", help="entries in the note before")
    parser.add_argument("--writes", type=int, default=30, help="appends and saves per size")
    parser.add_argument("--hash", action="store_true", help="the hash embedder, not the model")
    parser.add_argument("--profile", type=int, default=None, help="profile the writes at N")
    parser.add_argument("--sort", default="cumulative", help="profile order: cumulative, tottime")
    parser.add_argument("--no-history", action="store_true", help="versioning off")
    args = parser.parse_args()
    embedder = "hash embedder" if args.hash else "configured embedder"
    print(f"{embedder}; load average at start: {os.getloadavg()[0]:.1f}")
    for size in (int(s) for s in args.sizes.split(",")):
        run_size(size, args.writes, args.hash, size == args.profile, args.sort, not args.no_history)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
