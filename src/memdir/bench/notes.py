"""Synthetic but realistic markdown notes for the scale benchmark.

Deterministic (seeded): daily notes ``memory/YYYY/YYYY-MM-DD-<n>.md`` with a
date heading, a few sections (standup, decisions, meetings, learnings) of
bullets and short paragraphs about projects, people, tools and numbers.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

from memdir.index import chunk_markdown

PEOPLE = tuple(
    [
        "Alice",
        "Bruno",
        "Chen",
        "Dara",
        "Emeka",
        "Farah",
        "Goran",
        "Hana",
        "Ivo",
        "Jun",
        "Kemal",
        "Lena",
        "Mateo",
        "Nia",
        "Omar",
        "Priya",
    ]
)
PROJECTS = tuple(
    [
        "atlas",
        "billing",
        "checkout",
        "dashboard",
        "ingest",
        "ledger",
        "mobile",
        "onboarding",
        "search",
        "sync",
    ]
)
TOOLS = tuple(
    [
        "postgres",
        "redis",
        "kafka",
        "terraform",
        "grafana",
        "sentry",
        "docker",
        "pytest",
        "celery",
        "nginx",
        "s3",
        "rust",
    ]
)
VERBS = tuple(
    [
        "migrated",
        "reviewed",
        "deployed",
        "rolled",
        "back",
        "profiled",
        "rewrote",
        "documented",
        "benchmarked",
    ]
)
ISSUES = [
    "p95 latency regressed after the index change",
    "the nightly job ran out of memory on the largest tenant",
    "flaky test in the payment retries suite",
    "customer asked for CSV export of invoices",
    "cache hit rate dropped below sixty percent",
    "the migration locked the orders table for four minutes",
    "alerts were too noisy during the holiday freeze",
    "search results ignored accents in names",
]
SECTIONS = ["Standup", "Decisions", "Meetings", "Learnings", "Follow-ups"]


def _bullet(rng: random.Random) -> str:
    person, project, tool = rng.choice(PEOPLE), rng.choice(PROJECTS), rng.choice(TOOLS)
    kind = rng.randrange(4)
    if kind == 0:
        return f"- {person} {rng.choice(VERBS)} the {project} service on {tool}."
    if kind == 1:
        return f"- {project}: {rng.choice(ISSUES)}; {person} owns the fix."
    if kind == 2:
        return f"- Decided to keep {tool} for {project} until Q{rng.randint(1, 4)}; revisit later."
    return f"- {person} measured {rng.randint(2, 900)} ms on {project} with {tool}."


def _paragraph(rng: random.Random) -> str:
    sentences = [
        f"{rng.choice(PEOPLE)} explained why {rng.choice(PROJECTS)} depends on "
        f"{rng.choice(TOOLS)} and what {rng.choice(ISSUES)} means for the roadmap."
        for _ in range(rng.randint(2, 4))
    ]
    return " ".join(sentences)


def render_note(day: date, rng: random.Random) -> str:
    """One daily note of roughly 1,500 estimated tokens."""
    lines = [f"# {day.isoformat()}", ""]
    for section in rng.sample(SECTIONS, k=4):
        lines += [f"## {section}", ""]
        lines += [_bullet(rng) for _ in range(rng.randint(6, 12))]
        lines += ["", _paragraph(rng), ""]
    return "\n".join(lines) + "\n"


def iter_notes(seed: int = 7) -> Iterator[tuple[str, str]]:
    """Endless ``(relative path, text)`` pairs, several notes per day from 2015 on."""
    rng = random.Random(seed)
    day, serial = date(2015, 1, 1), 0
    while True:
        serial += 1
        yield f"memory/{day.year}/{day.isoformat()}-{serial}.md", render_note(day, rng)
        if serial % 3 == 0:
            day += timedelta(days=1)


def write_workspace(root: Path, chunks: int, seed: int = 7) -> dict[str, int]:
    """Write notes under ``root`` until they hold about ``chunks`` chunks; return counts."""
    counts = {"files": 0, "chunks": 0, "blocks": 0}
    for rel, text in iter_notes(seed):
        if counts["chunks"] >= chunks:
            break
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        spans = chunk_markdown(text)
        counts["files"] += 1
        counts["chunks"] += sum(1 for s in spans if s.kind == "chunk")
        counts["blocks"] += sum(1 for s in spans if s.kind == "block")
    return counts


def sample_queries(count: int, seed: int = 11) -> list[str]:
    """Questions an agent might ask of such notes."""
    rng = random.Random(seed)
    forms = [
        "what did {p} decide about {j}",
        "why is {j} slow with {t}",
        "who owns the {j} fix",
        "{t} latency on {j}",
        "when did we migrate {j} to {t}",
        "what went wrong with the nightly job",
    ]
    return [
        rng.choice(forms).format(p=rng.choice(PEOPLE), j=rng.choice(PROJECTS), t=rng.choice(TOOLS))
        for _ in range(count)
    ]
