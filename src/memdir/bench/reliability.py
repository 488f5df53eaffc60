"""``memdir bench reliability``: the red-team attack classes replayed, with counts.

Each part runs on a fresh home under ``workdir`` with real processes and the
hash embedder, and reports its counts and a ``wrong`` total whose target is 0:

* ``crash``: appends under SIGKILL (acknowledged / lost / duplicated / torn);
* ``facts``: saves racing syncs, plain and under SIGKILL (missing right after
  saving or at the end, updates that did not supersede, two current values);
* ``isolation``: an agent writing, copying, forgetting and rebuilding another
  workspace's fact ids (global facts changed, text leaked);
* ``secrets``: credential shapes caught and ordinary notes flagged (plus any
  extra notes given, e.g. LoCoMo turns), and the credential corpus's recall and
  false-positive rate against their targets;
* ``disk_full``: bytes failed appends left, answers on a full disk;
* ``cross_agent``: alice's token trying bob's workspace and the global workspace's rights
  over REST and MCP, and the global session's ``scope=all`` (``bench/cross_agent.py``);
* ``prompt_privacy``: private words of every prompt section in group and shared prompts;
* ``reads``: search, recall, get and prompt through the Python API, CLI, REST and MCP on
  a read-only home and on a full disk (reads that failed; ``bench/readable.py``);
* ``soak`` (when ``soak_seconds`` > 0): the mixed REST soak (``bench/soak.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from memdir.bench.crash import run_crash
from memdir.bench.credentials import corpus_figures, score_scanner
from memdir.bench.cross_agent import run_cross_agent, run_prompt_privacy
from memdir.bench.disk_full import run_disk_full
from memdir.bench.fact_race import as_dict, run_fact_race
from memdir.bench.isolation import run_isolation
from memdir.bench.readable import run_readable
from memdir.bench.soak import run_soak
from memdir.facts.secrets import find_secrets

Progress = Callable[[str], None]
SOAK_TARGET_MS = 250.0


def run_reliability(
    workdir: Path,
    *,
    seconds: float = 20.0,
    soak_seconds: float = 0.0,
    extra_notes: list[str] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run every part (``seconds`` each for the timed ones); return the figures as a dict."""
    say = progress or (lambda _: None)
    results: dict[str, Any] = {}
    say("crash: appends under SIGKILL")
    crash = run_crash(workdir / "crash" / "home", seconds=seconds)
    results["crash"] = {**asdict(crash), "wrong": crash.wrong}
    say("facts: saves racing syncs")
    plain = run_fact_race(workdir / "facts" / "home", seconds=seconds)
    killed = run_fact_race(workdir / "facts-killed" / "home", seconds=seconds, kill_every=0.5)
    results["facts"] = {"plain": as_dict(plain), "sigkill": as_dict(killed),
                        "wrong": plain.wrong + killed.wrong}  # fmt: skip
    say("isolation: cross-scope fact ids")
    isolation = run_isolation(workdir / "isolation" / "home")
    results["isolation"] = {**asdict(isolation), "wrong": isolation.wrong}
    say("secrets: credential shapes and ordinary notes")
    results["secrets"] = _secrets(extra_notes or [])
    say("disk full: failed appends and answers")
    disk = run_disk_full(workdir / "disk")
    results["disk_full"] = {**asdict(disk), "wrong": disk.wrong}
    say("cross agent: alice's token against bob and the global workspace")
    cross = run_cross_agent(workdir / "cross-agent")
    results["cross_agent"] = {**asdict(cross), "wrong": cross.wrong}
    say("prompt privacy: every section in every session kind")
    privacy = run_prompt_privacy(workdir / "privacy")
    results["prompt_privacy"] = {**asdict(privacy), "wrong": privacy.wrong}
    say("reads: a read-only home and a full disk")
    results["reads"] = _reads(workdir / "reads")
    if soak_seconds > 0:
        say(f"soak: {soak_seconds:.0f} s of mixed REST load")
        soak = asdict(run_soak(workdir / "soak", seconds=soak_seconds))
        slow = [op for op in ("search", "save") if soak["ops"][op]["p95_ms"] > SOAK_TARGET_MS]
        soak["wrong"] = soak["errors"] + soak["fresh_misses"] + soak["saves_lost"] + len(slow)
        soak["over_target_p95"] = slow
        results["soak"] = soak
    results["wrong"] = sum(part["wrong"] for part in results.values())
    return results


def _reads(workdir: Path) -> dict[str, Any]:
    part: dict[str, Any] = {}
    for condition in ("read_only", "full_disk"):
        report = run_readable(workdir, condition)
        part[condition] = {**asdict(report), "wrong": report.wrong}
    part["wrong"] = sum(part[c]["wrong"] for c in ("read_only", "full_disk"))
    return part


def _secrets(extra_notes: list[str]) -> dict[str, Any]:
    score = score_scanner()
    flagged_extra = sum(1 for note in extra_notes if find_secrets(note))
    figures = corpus_figures()
    return {
        "corpus": {part: figures[part] for part in ("tune", "heldout")},
        "shapes": score.shapes,
        "caught": score.caught,
        "missed": score.missed,
        "ordinary_notes": score.notes,
        "false_positives": score.false_positives,
        "extra_notes": len(extra_notes),
        "extra_flagged": flagged_extra,
        "wrong": len(score.missed) + len(score.false_positives) + flagged_extra + figures["wrong"],
    }


def locomo_turns(path: Path) -> list[str]:
    """Every turn text of a LoCoMo JSON file (ordinary conversation, for false positives)."""
    texts: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("text"), str):
                texts.append(value["text"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(path.read_text(encoding="utf-8")))
    return texts
