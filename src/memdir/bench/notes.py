"""Synthetic but realistic markdown notes for the scale benchmark.

Deterministic (seeded): daily notes ``memory/YYYY/YYYY-MM-DD-<n>.md`` with a
date heading, a few sections (standup, decisions, meetings, learnings) of
bullets and short paragraphs about projects, people, tools, topics and numbers.

Words follow Zipf's law, as in real notes: a core team, a few main projects and
tools come up all the time, and a long tail of colleagues, services, tools and
topic words (made-up syllable words, deterministic) comes up rarely, so the
vocabulary grows with the notes: 29,760 distinct terms in 100k units. The first
version drew every name from ~130 words (1,036 terms in 100k units, 909 of them
numbers), so every term of every generated question was in 9-28% of all units,
which no real notebook looks like. The bullet templates are kept: their fixed
words ("decided", "owns the fix", "measured") are still in ~28% of units, more
than in real notes, so keyword search here stays on the pessimistic side.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Iterator, Sequence
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
ZIPF_S = 1.0  # word frequency falls as 1 / rank ** s (Zipf's law)
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def made_up_words(count: int, seed: int, capitalise: bool = False) -> tuple[str, ...]:
    """``count`` distinct made-up words of two or three syllables (deterministic)."""
    rng = random.Random(seed)
    words: dict[str, None] = {}
    while len(words) < count:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 3, 3))))
        words[word.capitalize() if capitalise else word] = None
    return tuple(words)


class Zipf:
    """Draws from ``words`` with probability falling as ``1 / rank ** s``."""

    def __init__(self, words: Sequence[str], s: float = ZIPF_S) -> None:
        self.words = tuple(words)
        self.cumulative = list(itertools.accumulate(1.0 / r**s for r in range(1, len(words) + 1)))

    def draw(self, rng: random.Random) -> str:
        at = rng.random() * self.cumulative[-1]
        return self.words[min(bisect.bisect(self.cumulative, at), len(self.words) - 1)]


# The named lists above come first (most frequent); the made-up tails follow them.
PEOPLE_Z = Zipf(PEOPLE + made_up_words(400, 1, capitalise=True))
PROJECTS_Z = Zipf(PROJECTS + made_up_words(300, 2))
TOOLS_Z = Zipf(TOOLS + made_up_words(200, 3))
TOPICS_Z = Zipf(made_up_words(60_000, 4))


def _bullet(rng: random.Random) -> str:
    person, project, tool = PEOPLE_Z.draw(rng), PROJECTS_Z.draw(rng), TOOLS_Z.draw(rng)
    topic = TOPICS_Z.draw(rng)
    kind = rng.randrange(4)
    if kind == 0:
        return f"- {person} {rng.choice(VERBS)} the {project} {topic} service on {tool}."
    if kind == 1:
        return f"- {project} {topic}: {rng.choice(ISSUES)}; {person} owns the fix."
    if kind == 2:
        return (
            f"- Decided to keep {tool} for {project} {topic} until Q{rng.randint(1, 4)}; "
            "revisit later."
        )
    return f"- {person} measured {rng.randint(2, 900)} ms on {project} {topic} with {tool}."


def _paragraph(rng: random.Random) -> str:
    sentences = [
        f"{PEOPLE_Z.draw(rng)} explained why {PROJECTS_Z.draw(rng)} depends on "
        f"{TOOLS_Z.draw(rng)} {TOPICS_Z.draw(rng)} and what {rng.choice(ISSUES)} means for "
        f"the {TOPICS_Z.draw(rng)} {TOPICS_Z.draw(rng)} roadmap."
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
        _write_counted(root / rel, text, counts)
    return counts


def _write_counted(path: Path, text: str, counts: dict[str, int]) -> None:
    """Write the note ``text`` at ``path`` and add its file, chunks and blocks to ``counts``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    spans = chunk_markdown(text)
    counts["files"] += 1
    counts["chunks"] += sum(1 for s in spans if s.kind == "chunk")
    counts["blocks"] += sum(1 for s in spans if s.kind == "block")


def sample_queries(count: int, seed: int = 11) -> list[str]:
    """Questions an agent might ask of such notes (about what the notes mention most)."""
    rng = random.Random(seed)
    forms = [
        "what did {p} decide about {j}",
        "why is {j} slow with {t}",
        "who owns the {j} {x} fix",
        "{t} latency on {j}",
        "when did we migrate {j} to {t}",
        "what went wrong with the nightly job",
        "what do we know about {x} in {j}",
    ]
    return [
        rng.choice(forms).format(
            p=PEOPLE_Z.draw(rng), j=PROJECTS_Z.draw(rng), t=TOOLS_Z.draw(rng), x=TOPICS_Z.draw(rng)
        )
        for _ in range(count)
    ]


def write_short_notes(root: Path, chunks: int, seed: int = 13) -> dict[str, int]:
    """Write short topic notes under ``root`` until they hold ``chunks`` chunks.

    Each note, ``notes/<project>/<n>.md``, is a heading and two bullets of the same shapes
    as the daily notes: one small chunk and two blocks, so a home grows by many chunks at
    a modest embedding cost (the round-trip benchmark's distractors).
    """
    rng = random.Random(seed)
    counts = {"files": 0, "chunks": 0, "blocks": 0}
    while counts["chunks"] < chunks:
        project = PROJECTS_Z.draw(rng)
        text = f"# {project} {TOPICS_Z.draw(rng)}\n\n{_bullet(rng)}\n{_bullet(rng)}\n"
        _write_counted(root / "notes" / project / f"{counts['files'] + 1}.md", text, counts)
    return counts
