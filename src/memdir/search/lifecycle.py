"""Lifecycle-aware search: what memory no longer holds true stays out of the answer.

A saved fact is a line of a daily note; when a later fact supersedes it or it is
forgotten, the line stays in the note (nothing is silently deleted) but it is history, not
the current truth, and so is the ``Forgot: ...`` line that records a forget. The facts
store knows these lines (``RetiredLine``). A default search leaves them out: a block made
of retired lines is dropped and a chunk is cut around them, so no hit quotes them and
none of them counts as evidence for the confidence. With ``include_history`` they come
back as hits of their own, marked with why they are retired and when they were valid,
and ranked after every current hit: an agent acts on what comes first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol

from memdir.search.snippets import Candidate
from memdir.store.contracts import ScoredId, Unit
from memdir.store.fact_records import RetiredLine

Retired = Mapping[tuple[str, str], Mapping[int, RetiredLine]]
"""(source, path) -> line number -> why that line is retired."""


class RetiredLines(Protocol):
    """Where a search reads retired lines: the facts store (``FactStore.retired_lines``)."""

    def retired_lines(
        self, sources: Sequence[str], paths: Sequence[str] | None = None
    ) -> list[RetiredLine]: ...


def read_retired(
    facts: RetiredLines, sources: Sequence[str], files: set[tuple[str, str]]
) -> Retired:
    """The retired lines of the files (source, path) a search read, in its ``sources``:
    asked once per search, for its candidates' files only, so its cost does not grow with
    the whole memory."""
    paths = sorted({path for source, path in files if source in sources})
    return index_retired(facts.retired_lines(sources, paths))


def index_retired(lines: Iterable[RetiredLine]) -> dict[tuple[str, str], dict[int, RetiredLine]]:
    """Group retired lines by file for quick lookups."""
    out: dict[tuple[str, str], dict[int, RetiredLine]] = defaultdict(dict)
    for line in lines:
        out[(line.source, line.path)][line.line] = line
    return dict(out)


def fully_retired(unit: Unit | None, retired: Retired) -> bool:
    """Whether every non-blank line of ``unit`` is retired."""
    if unit is None:
        return False
    marks = retired.get((unit.source, unit.path))
    if not marks:
        return False
    lines = unit.text.split("\n")
    numbered = zip(range(unit.start_line, unit.end_line + 1), lines, strict=False)
    return all(number in marks for number, text in numbered if text.strip())


def current_only(
    items: list[ScoredId], units: Mapping[int, Unit], retired: Retired
) -> list[ScoredId]:
    """The list without units made of retired lines (``units`` must hold them)."""
    if not retired:
        return items
    return [item for item in items if not fully_retired(units.get(item.unit_id), retired)]


def apply_lifecycle(
    candidates: list[Candidate], retired: Retired, include_history: bool
) -> list[Candidate]:
    """Drop retired lines from the candidates, or (history) split them off and mark them.

    A candidate that mixes current and retired lines is cut into runs of current lines;
    with history each retired line becomes a candidate of its own carrying its
    ``RetiredLine``, with the relevance of the candidate it came from.
    """
    if not retired:
        return candidates
    out: list[Candidate] = []
    for candidate in candidates:
        marks = retired.get(candidate.file_key)
        if not marks or not any(
            n in marks for n in range(candidate.start_line, candidate.end_line + 1)
        ):
            out.append(candidate)
            continue
        for start, end, mark in _runs(candidate, marks):
            if mark is not None and not include_history:
                continue
            piece = candidate.narrowed(start, end)
            piece.retired = mark
            out.append(piece)
    return out


def _runs(
    candidate: Candidate, marks: Mapping[int, RetiredLine]
) -> list[tuple[int, int, RetiredLine | None]]:
    """Runs of current lines (blank-trimmed) and single retired lines, in order."""
    runs: list[tuple[int, int, RetiredLine | None]] = []
    start: int | None = None
    lines = candidate.lines
    for number in range(candidate.start_line, candidate.end_line + 2):
        mark = marks.get(number)
        ends_run = number > candidate.end_line or mark is not None
        if ends_run and start is not None:
            runs.append((start, number - 1, None))
            start = None
        if number > candidate.end_line:
            break
        if mark is not None:
            runs.append((number, number, mark))
        elif start is None and lines.get(number, "").strip():
            start = number
    return [_trimmed(run, lines) for run in runs]


def _trimmed(
    run: tuple[int, int, RetiredLine | None], lines: Mapping[int, str]
) -> tuple[int, int, RetiredLine | None]:
    start, end, mark = run
    while end > start and not lines.get(end, "").strip():
        end -= 1
    return start, end, mark


def describe_retired(line: RetiredLine) -> str:
    """Why a line is history, in a few words: ``superseded (valid 2026-11-01 to 2026-11-21)``."""
    since = _day(line.valid_from)
    if line.kind == "forget-record":
        return f"the record of forgetting fact {line.fact_id}"
    if line.kind == "forgotten":
        reason = f": {line.reason}" if line.reason else ""
        return f"forgotten on {_day(line.forgotten_at)}{reason} (valid since {since})"
    return f"superseded (valid {since} to {_day(line.valid_to)})"


def _day(when: datetime | None) -> str:
    return "?" if when is None else when.date().isoformat()
