"""Concurrent saves and syncs of one workspace's facts, in real processes, with counts.

Savers save updates of a few subjects ("The build server of project orion is
bravo 12"); after each save returns, the saver looks the fact up by id, as a
``memory_forget(fact_id)`` right after would, and logs the id. Syncers re-sync
the facts in a loop. With ``kill_every`` a parent SIGKILLs a random saver at
random intervals and starts a new one (saves cut anywhere, even between the
note's line and the store). Afterwards a fresh process syncs once and counts:

* ``acknowledged``: saves that returned (and were logged);
* ``missing_after_save``: facts not found by id right after their save returned;
* ``missing_at_end``: acknowledged facts absent from the facts after the final sync;
* ``not_superseding``: saves of a subject that already had a current fact but
  did not supersede it (the later ones of a subject's ``add`` saves);
* ``subjects_with_two_current``: subjects with more than one current value.

Run through ``memdir bench reliability``; the tests run it briefly.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from memdir.embeddings.base import HashEmbedder
from memdir.errors import NotFoundError
from memdir.memory import Memory

SUBJECTS = ("orion", "vega", "lyra", "draco", "hydra", "cygnus")
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


def subject_text(subject: str, value: str) -> str:
    return f"The build server of project {subject} is {value}"


def subject_of(text: str) -> str | None:
    for subject in SUBJECTS:
        if text.startswith(subject_text(subject, "")):
            return subject
    return None


@dataclass(frozen=True)
class RaceCounts:
    """What a run of savers and syncers left (see the module docstring)."""

    savers: int
    syncers: int
    seconds: float
    kills: int
    acknowledged: int
    missing_after_save: int
    missing_at_end: int
    not_superseding: int
    subjects_with_two_current: int

    @property
    def wrong(self) -> int:
        return (
            self.missing_after_save
            + self.missing_at_end
            + self.not_superseding
            + self.subjects_with_two_current
        )


def _open(home: Path) -> Memory:
    return Memory.open(home, embedder=HashEmbedder(), chat_model=None)


def saver(home: Path, seconds: float, seed: int, out: Path) -> None:
    """Save updates until the time is up; log each acknowledged id (and misses) to ``out``."""
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    with _open(home) as memory, out.open("a", encoding="utf-8") as log:
        n = 0
        while time.monotonic() < deadline:
            n += 1
            value = f"{rng.choice(WORDS)} {seed} {n}"
            outcome = memory.save(subject_text(rng.choice(SUBJECTS), value))
            if outcome.fact is None or outcome.action == "none":
                continue
            try:
                memory.facts.get(outcome.fact.id)
                found = True
            except NotFoundError:
                found = False
            log.write(json.dumps({"id": outcome.fact.id, "found": found}) + "\n")
            log.flush()


def syncer(home: Path, seconds: float) -> None:
    """Re-sync the facts of the global workspace until the time is up."""
    deadline = time.monotonic() + seconds
    with _open(home) as memory:
        while time.monotonic() < deadline:
            memory.facts.sync()


def _spawn(log: Path, *args: str) -> subprocess.Popen[bytes]:
    """A race process of this module; its stderr goes to ``log``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    with log.open("ab") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "memdir.bench.fact_race", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


def run_fact_race(
    home: Path,
    *,
    savers: int = 2,
    syncers: int = 2,
    seconds: float = 10.0,
    kill_every: float | None = None,
    seed: int = 1,
) -> RaceCounts:
    """Race ``savers`` against ``syncers`` on ``home`` (a fresh folder) and count the damage.

    ``kill_every`` (seconds, on average) SIGKILLs a random saver that often and
    starts another in its place.
    """
    with _open(home) as memory:
        memory.init()
    rng = random.Random(seed)
    logs = home.parent / f"{home.name}-race"
    logs.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + seconds
    spawned = 0

    def start_saver() -> subprocess.Popen[bytes]:
        nonlocal spawned
        spawned += 1
        left = max(0.5, deadline - time.monotonic())
        out = logs / f"saver-{spawned}.jsonl"
        args = (str(home), f"{left:.2f}", str(seed * 1000 + spawned), str(out))
        return _spawn(logs / "stderr.log", "saver", *args)

    running = [start_saver() for _ in range(savers)]
    sync_procs = [
        _spawn(logs / "stderr.log", "syncer", str(home), f"{seconds:.2f}") for _ in range(syncers)
    ]
    kills = 0
    while time.monotonic() < deadline:
        if kill_every is None:
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
            continue
        time.sleep(rng.uniform(0.2, 2 * kill_every))
        if time.monotonic() >= deadline - 0.5:
            break
        victim = rng.randrange(len(running))
        running[victim].send_signal(signal.SIGKILL)
        running[victim].wait()
        kills += 1
        running[victim] = start_saver()
    for process in [*running, *sync_procs]:
        if process.wait(timeout=120) not in (0, -signal.SIGKILL):
            err = (logs / "stderr.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"a race process failed ({process.returncode}): {err}")
    return _count(home, logs, savers, syncers, seconds, kills)


def _count(
    home: Path, logs: Path, savers: int, syncers: int, seconds: float, kills: int
) -> RaceCounts:
    entries = [
        json.loads(line)
        for path in sorted(logs.glob("saver-*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    with _open(home) as memory:
        memory.facts.sync()
        facts = {
            f.id: f for f in memory.list_facts(include_superseded=True, include_forgotten=True)
        }
    current = Counter(
        subject_of(f.text) for f in facts.values() if f.valid_to is None and not f.forgotten
    )
    adds = Counter(subject_of(f.text) for f in facts.values() if f.supersedes is None)
    return RaceCounts(
        savers=savers,
        syncers=syncers,
        seconds=seconds,
        kills=kills,
        acknowledged=len(entries),
        missing_after_save=sum(not e["found"] for e in entries),
        missing_at_end=sum(e["id"] not in facts for e in entries),
        not_superseding=sum(n - 1 for subject, n in adds.items() if subject and n > 1),
        subjects_with_two_current=sum(1 for s, n in current.items() if s and n > 1),
    )


def as_dict(counts: RaceCounts) -> dict[str, object]:
    return {**asdict(counts), "wrong": counts.wrong}


if __name__ == "__main__":
    role, home_arg, seconds_arg, *rest = sys.argv[1:]
    if role == "saver":
        saver(Path(home_arg), float(seconds_arg), int(rest[0]), Path(rest[1]))
    else:
        syncer(Path(home_arg), float(seconds_arg))
