"""Appends cut by SIGKILL: is every acknowledged write in the note exactly once, and whole?

Writer processes append numbered entries to the global daily note through
``Memory.append_daily`` and log each number once the call returned. The parent
SIGKILLs a random writer every ``kill_every`` seconds (on average) and starts
another. Afterwards it counts, over the note: ``acknowledged`` entries,
``lost`` (acknowledged, not in the note), ``duplicated`` (in the note more than
once) and ``torn`` (a line of a crash entry that is not whole).
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
from memdir.workspace.daily import repair_interrupted_appends

PAYLOAD = "x" * 300  # long enough that a cut write would show
_ENTRY = re.compile(r"^- crash (\d+)-(\d+) (x+) end$")
DAY = dt.date(2026, 1, 2)


@dataclass(frozen=True)
class CrashCounts:
    """What the killed appenders left (see the module docstring)."""

    writers: int
    seconds: float
    kills: int
    acknowledged: int
    lost: int
    duplicated: int
    torn: int

    @property
    def wrong(self) -> int:
        return self.lost + self.duplicated + self.torn


def writer(home: Path, writer_id: int, log: Path) -> None:
    """Append entries until killed; log each number after its append returned."""
    with Memory.open(home, embedder=HashEmbedder()) as memory, log.open("a") as out:
        n = 0
        while True:
            n += 1
            memory.append_daily(f"- crash {writer_id}-{n} {PAYLOAD} end", date=_day())
            out.write(f"{n}\n")
            out.flush()


def _day() -> dt.datetime:
    return dt.datetime.combine(DAY, dt.time(12))


STARTUP_S = 60.0  # at most this long for the first writer to start writing


def run_crash(
    home: Path, *, writers: int = 3, seconds: float = 10.0, kill_every: float = 0.3, seed: int = 1
) -> CrashCounts:
    """Run ``writers`` appenders on ``home`` for ``seconds`` under random SIGKILLs."""
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.init()
    logs = home.parent / f"{home.name}-crash"
    logs.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    rng = random.Random(seed)
    started = 0

    def start() -> tuple[int, subprocess.Popen[bytes]]:
        nonlocal started
        started += 1
        log = logs / f"writer-{started}.log"
        command = [sys.executable, "-m", "memdir.bench.crash", str(home), str(started), str(log)]
        return started, subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)

    def writing(entry: tuple[int, subprocess.Popen[bytes]]) -> bool:
        log = logs / f"writer-{entry[0]}.log"  # a writer still importing is not killed yet:
        return log.exists() and log.stat().st_size > 0  # on a loaded machine none would write

    running = [start() for _ in range(writers)]
    ready_by = time.monotonic() + STARTUP_S  # the clock runs from the first write: a loaded
    while time.monotonic() < ready_by and not any(writing(e) for e in running):  # machine
        time.sleep(0.05)  # may take seconds to import a writer
    deadline = time.monotonic() + seconds
    kills = 0
    while time.monotonic() < deadline:
        time.sleep(rng.uniform(0.05, 2 * kill_every))
        ready = [n for n, entry in enumerate(running) if writing(entry)]
        if not ready:
            continue
        victim = rng.choice(ready)
        running[victim][1].send_signal(signal.SIGKILL)
        running[victim][1].wait()
        kills += 1
        running[victim] = start()
    for _, process in running:
        process.send_signal(signal.SIGKILL)
        process.wait()
    return _count(home, logs, writers, seconds, kills)


def _count(home: Path, logs: Path, writers: int, seconds: float, kills: int) -> CrashCounts:
    acknowledged = {
        (int(path.stem.split("-")[1]), int(line))
        for path in logs.glob("writer-*.log")
        for line in path.read_text(encoding="utf-8").split("\n")[:-1]  # a cut last line
        if line.strip().isdigit()
    }
    repair_interrupted_appends(home / "workspace")  # what any memdir process does first
    note = home / "workspace" / "memory" / f"{DAY.isoformat()}.md"
    seen: dict[tuple[int, int], int] = {}
    torn = 0
    text = note.read_text(encoding="utf-8", errors="replace") if note.exists() else ""
    for line in text.splitlines():
        if not line.startswith("- crash") and "crash" not in line:
            continue
        match = _ENTRY.match(line)
        if match is None or match[3] != PAYLOAD:
            torn += 1
            continue
        key = (int(match[1]), int(match[2]))
        seen[key] = seen.get(key, 0) + 1
    return CrashCounts(
        writers=writers,
        seconds=seconds,
        kills=kills,
        acknowledged=len(acknowledged),
        lost=sum(1 for key in acknowledged if key not in seen),
        duplicated=sum(1 for count in seen.values() if count > 1),
        torn=torn,
    )


if __name__ == "__main__":
    writer(Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
