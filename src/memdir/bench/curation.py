"""How well the no-model curation heuristics do on ``curation_set``.

Four measures, each on the statements or pairs of ``memdir.bench.curation_set``
(``held_out=True``: the ``HELD_OUT_*`` twins, never tuned on):

* **extraction**: ``heuristic_extract`` over each statement said by the user. *Recall*:
  expected facts found (every key word starts a word of one extracted fact); *precision*:
  extracted facts that are expected ones. *Mixed person*: facts that speak of "the user"
  and say I, me or my too ("The user's name is Alice and I work at ACME").
* **updates**: an older fact saved, then a newer statement, through ``Memory.save`` (the
  real path: candidates, then the heuristic decider), as ``memdir bench updates`` does:
  recall of supersessions of the right fact and their precision, on ``UPDATES`` and
  ``KEEPS``.
* **duplicates**: the same for near-duplicate pairs: *recall* is the share of
  ``DUPLICATES`` whose second phrasing did not become a second current fact (reinforced,
  or a fuller statement that supersedes the first); *precision* is the share of those
  recognitions that were right, counting each ``DISTINCT`` pair taken for a duplicate (or
  a supersession) as a false one.
* **consolidation**: each pair written as two decisions on two days of daily notes, plain
  bullets or as ``Memory.save`` writes them (fact markers, with its reinforce or supersede
  line), and consolidated with the heuristic: a near-duplicate pair should give one
  MEMORY.md entry, a distinct pair two.
"""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memdir.bench import curation_set as data
from memdir.bench.updates import Outcome, save_pair, summarise_updates
from memdir.curate.consolidation import DailyNote, promote_heuristically
from memdir.curate.heuristics import heuristic_extract
from memdir.llm import Message

Progress = Callable[[int, int], None]

_TOKEN = re.compile(r"[\w/@.:+'-]+")
_FIRST_PERSON = frozenset({"i", "i'm", "me", "my", "mine", "myself", "i've", "i'd", "i'll"})
DAY_ONE = dt.date(2026, 3, 2)


def _words(text: str) -> list[str]:
    return [w.strip(".,:;!?'").lower() for w in _TOKEN.findall(text)]


def matches(key: str, fact: str) -> bool:
    """Every word of ``key`` starts a word of ``fact`` (case-insensitive)."""
    words = _words(fact)
    return all(any(w.startswith(k) for w in words) for k in _words(key))


def is_mixed_person(fact: str) -> bool:
    """A fact about "the user" that also speaks in the first person."""
    words = set(_words(fact))
    return "user" in words and bool(words & _FIRST_PERSON)


def score_extraction(statements: Sequence[tuple[str, list[str]]]) -> dict[str, Any]:
    """Recall, precision and mixed-person facts of the extraction heuristic."""
    expected = found = right = mixed = 0
    missed: list[str] = []
    false: list[str] = []
    for text, keys in statements:
        facts = [f.text for f in heuristic_extract([Message("user", text)])]
        expected += len(keys)
        found += len(facts)
        mixed += sum(is_mixed_person(f) for f in facts)
        unused = list(facts)
        for key in keys:
            hit = next((f for f in unused if matches(key, f)), None)
            if hit is None:
                missed.append(f"{text} [{key}]")
            else:
                unused.remove(hit)
                right += 1
        false += [f"{text} -> {f}" for f in unused]
    return {
        "statements": len(statements),
        "expected_facts": expected,
        "extracted_facts": found,
        "recall": round(right / expected, 3) if expected else 0.0,
        "precision": round(right / found, 3) if found else 1.0,
        "mixed_person_facts": mixed,
        "missed": missed,
        "false": false,
    }


def score_duplicates(duplicates: Sequence[Outcome], distinct: Sequence[Outcome]) -> dict[str, Any]:
    """Near-duplicates recognised (one current fact), and distinct facts kept apart."""
    recognised = [o for o in duplicates if o.action != "add" and o.hit_old]
    merged = [o for o in distinct if o.action != "add"]
    taken = len(recognised) + len(merged)
    return {
        "pairs": len(duplicates) + len(distinct),
        "recall": round(len(recognised) / len(duplicates), 3) if duplicates else 0.0,
        "precision": round(len(recognised) / taken, 3) if taken else 1.0,
        "distinct_merged": len(merged),
        "missed": [f"{o.old} -> {o.new}" for o in duplicates if o not in recognised],
        "false": [f"{o.old} -> {o.new} ({o.action})" for o in merged],
    }


def _plain_notes(first: str, second: str) -> list[DailyNote]:
    return [
        DailyNote(DAY_ONE, "memory/2026-03-02.md", f"# 2026-03-02\n\n- Decided: {first}\n"),
        DailyNote(
            DAY_ONE + dt.timedelta(days=1),
            "memory/2026-03-03.md",
            f"# 2026-03-03\n\n- Decided: {second}\n",
        ),
    ]


def _saved_notes(first: str, second: str, embedder: Any) -> list[DailyNote]:
    """The daily notes two ``Memory.save`` calls write (category decision)."""
    from memdir.memory import Memory

    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory.open(Path(tmp), embedder=embedder, chat_model=None) as memory,
    ):
        memory.save(first, category="decision")
        memory.save(second, category="decision")
        notes = memory.workspace.list_daily_notes()
        return [DailyNote(DAY_ONE, n.relpath, n.path.read_text(encoding="utf-8")) for n in notes]


def score_consolidation(
    duplicates: Sequence[tuple[str, str]], distinct: Sequence[tuple[str, str]], embedder: Any
) -> dict[str, Any]:
    """How many MEMORY.md entries the heuristic consolidation writes for each pair."""
    out: dict[str, Any] = {}
    for kind in ("plain", "saved"):

        def notes_for(first: str, second: str, kind: str = kind) -> list[DailyNote]:
            if kind == "plain":
                return _plain_notes(first, second)
            return _saved_notes(first, second, embedder)

        once = sum(len(promote_heuristically(notes_for(a, b), "")) == 1 for a, b in duplicates)
        both = sum(len(promote_heuristically(notes_for(a, b), "")) == 2 for a, b in distinct)
        out[kind] = {
            "duplicates_promoted_once": f"{once}/{len(duplicates)}",
            "distinct_promoted_both": f"{both}/{len(distinct)}",
        }
    return out


def run_curation(
    embedder: Any, progress: Progress | None = None, held_out: bool = False
) -> dict[str, Any]:
    """Every measure on the chosen part of the set (see the module docstring)."""

    def pick(name: str) -> Any:
        return getattr(data, f"HELD_OUT_{name}" if held_out else name)

    statements = pick("STATEMENTS")
    pairs: list[tuple[str, str, Any, str]] = [
        *((old, new, "supersede", "updates") for old, new in pick("UPDATES")),
        *((old, new, "add", "updates") for old, new in pick("KEEPS")),
        *((old, new, "none", "duplicates") for old, new in pick("DUPLICATES")),
        *((old, new, "add", "distinct") for old, new in pick("DISTINCT")),
    ]
    total = len(pairs) + 1
    outcomes: dict[str, list[Outcome]] = {"updates": [], "duplicates": [], "distinct": []}
    for done, (old, new, expected, group) in enumerate(pairs, start=1):
        outcomes[group].append(save_pair(old, new, expected, embedder))
        if progress is not None:
            progress(done, total)
    updates = summarise_updates(outcomes["updates"])
    result = {
        "part": "held-out" if held_out else "development",
        "extraction": score_extraction(statements),
        "updates": {
            "pairs": updates["pairs"],
            "recall": updates["update_recall"],
            "precision": updates["supersede_precision"],
            "false_supersessions": updates["false_supersessions"],
            "missed": updates["missed"],
            "false": updates["false"],
        },
        "duplicates": score_duplicates(outcomes["duplicates"], outcomes["distinct"]),
        "consolidation": score_consolidation(pick("DUPLICATES"), pick("DISTINCT"), embedder),
    }
    if progress is not None:
        progress(total, total)
    return result
