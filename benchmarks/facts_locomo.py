"""Facts recall on LoCoMo: save each session's observations as facts, ask the questions.

Data: /work/shared/bench/locomo-dev.json (LoCoMo, CC BY-NC 4.0; read in place,
never copied). Each conversation has, per session, ``observation`` lists of
``[text, dia_id]`` per speaker. Every observation is saved as a fact through
``FactBook.save`` (heuristic dedup/supersession, no LLM), with the clock set to
the session's date so facts land in that day's note. Then, for each question of
categories 1-4, ``recall(question, limit=5)``; a question counts as answered
when a recalled fact came from a turn in its ``evidence``. Questions whose
evidence turns have no observation are skipped (and counted).

Run: .venv/bin/python benchmarks/facts_locomo.py [--embedder local|hash|none] [--limit N]
Prints recall@5 (any evidence fact in the top 5, and the share of evidence facts
found), per category, and save/recall latency p50/p95. Not a timed test.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memdir.embeddings.base import Embedder, HashEmbedder
from memdir.errors import DependencyError, EmbeddingError, InvalidInputError
from memdir.facts import FactBook

DATA = Path("/work/shared/bench/locomo-dev.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def make_embedder(name: str) -> tuple[Embedder | None, str]:
    if name == "none":
        return None, "none (keyword-only)"
    if name == "hash":
        return HashEmbedder(256), "hash-256 (test double, not semantic)"
    try:
        from memdir.embeddings import create_embedder  # type: ignore[attr-defined]

        embedder: Embedder = create_embedder("local")
    except ImportError:
        from memdir.embeddings.local import LocalEmbedder

        embedder = LocalEmbedder()
    try:
        embedder.embed_query("warm up")
    except (EmbeddingError, DependencyError) as exc:
        print(f"local embedder unavailable ({exc}); falling back to hash", file=sys.stderr)
        return HashEmbedder(256), "hash-256 (local model unavailable)"
    return embedder, f"{embedder.provider}/{embedder.model}"


def session_time(raw: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware datetime (UTC)."""
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


class SessionClock:
    """Returns the current session's time, a microsecond later on every call."""

    def __init__(self) -> None:
        self.now = datetime(2000, 1, 1, tzinfo=UTC)

    def set(self, when: datetime) -> None:
        self.now = max(self.now, when)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1)
        return self.now


def observations(sample: dict[str, object]) -> Iterator[tuple[datetime, str, set[str]]]:
    """(session time, text, dia_id) in session order."""
    conversation = sample["conversation"]
    assert isinstance(conversation, dict)
    per_session = sample["observation"]
    assert isinstance(per_session, dict)
    keys = sorted(per_session, key=lambda k: int(re.findall(r"\d+", k)[0]))
    for key in keys:
        number = re.findall(r"\d+", key)[0]
        when = session_time(conversation[f"session_{number}_date_time"])
        for items in per_session[key].values():
            for text, dia_id in items:  # dia_id is "D1:3" or, rarely, a list of them
                yield when, text, evidence_ids(dia_id if isinstance(dia_id, list) else [dia_id])


def evidence_ids(raw: list[str]) -> set[str]:
    return {part for item in raw for part in re.split(r"[;,\s]+", item) if part}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else 0.0


def run_sample(
    sample: dict[str, object], embedder: Embedder | None, stats: dict[str, list[float]]
) -> dict[str, object]:
    clock = SessionClock()
    source: dict[str, set[str]] = defaultdict(set)
    actions: dict[str, int] = defaultdict(int)
    with tempfile.TemporaryDirectory() as home, FactBook.open(home, embedder, clock=clock) as book:
        for when, text, dia_id in observations(sample):
            clock.set(when)
            start = time.perf_counter()
            try:
                outcome = book.save(text)
            except InvalidInputError as exc:
                actions[type(exc).__name__] += 1
                continue
            stats["save"].append(time.perf_counter() - start)
            actions[outcome.action] += 1
            if outcome.fact is not None:
                source[outcome.fact.id].update(dia_id)
        observed = {d for ids in source.values() for d in ids}
        results = []
        qa = sample["qa"]
        assert isinstance(qa, list)
        for item in qa:
            category = int(item["category"])
            wanted = evidence_ids(item.get("evidence", [])) & observed
            if category not in CATEGORIES or not wanted:
                results.append((category, None, None))
                continue
            start = time.perf_counter()
            hits = book.recall(item["question"], limit=5)
            stats["recall"].append(time.perf_counter() - start)
            found = {d for h in hits for d in source.get(h.fact.id, set())} & wanted
            results.append((category, bool(found), len(found) / len(wanted)))
    return {"results": results, "actions": dict(actions)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", choices=["local", "hash", "none"], default="local")
    parser.add_argument("--limit", type=int, default=0, help="only the first N conversations")
    args = parser.parse_args(argv)
    embedder, label = make_embedder(args.embedder)
    samples = json.loads(DATA.read_text())
    if args.limit:
        samples = samples[: args.limit]
    stats: dict[str, list[float]] = {"save": [], "recall": []}
    per_category: dict[int, list[tuple[bool, float]]] = defaultdict(list)
    actions: dict[str, int] = defaultdict(int)
    skipped = 0
    began = time.perf_counter()
    for sample in samples:
        outcome = run_sample(sample, embedder, stats)
        for name, count in outcome["actions"].items():  # type: ignore[attr-defined]
            actions[name] += count
        for category, hit, share in outcome["results"]:  # type: ignore[attr-defined]
            if category in CATEGORIES and hit is None:
                skipped += 1
            elif hit is not None:
                per_category[category].append((hit, share))
    report(label, per_category, stats, dict(actions), skipped, time.perf_counter() - began)


def report(
    label: str,
    per_category: dict[int, list[tuple[bool, float]]],
    stats: dict[str, list[float]],
    actions: dict[str, int],
    skipped: int,
    seconds: float,
) -> None:
    line: Callable[[str, list[tuple[bool, float]]], str] = lambda name, rows: (  # noqa: E731
        f"{name:<12} n={len(rows):<4} hit@5={statistics.mean(r[0] for r in rows):.3f}  "
        f"evidence-recall@5={statistics.mean(r[1] for r in rows):.3f}"
    )
    print(f"facts on LoCoMo dev ({DATA.name}), embedder: {label}")
    print(f"saves: {actions}; questions skipped (no observed evidence): {skipped}")
    for category, name in CATEGORIES.items():
        if per_category.get(category):
            print(line(name, per_category[category]))
    print(line("all (1-4)", [r for rows in per_category.values() for r in rows]))
    for name, values in stats.items():
        print(
            f"{name} latency: p50 {percentile(values, 0.5) * 1000:.1f} ms, "
            f"p95 {percentile(values, 0.95) * 1000:.1f} ms over {len(values)} calls"
        )
    print(f"total {seconds:.1f} s")


if __name__ == "__main__":
    main()
