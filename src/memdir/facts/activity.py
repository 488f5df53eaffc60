"""What changed in memory lately: files written and facts saved, superseded or forgotten.

``collect_activity`` turns what the workspace and the facts already record (file
modification times; a fact's ``recorded_at``, ``valid_to`` and ``forgotten_at``)
into one newest-first report; nothing new is stored. ``Memory.recent`` calls it
for the ``memory_recent`` tool, ``memdir recent`` and the browser's landing page.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from memdir.store.fact_records import Fact

FactChangeKind = Literal["saved", "superseded", "forgotten"]


@dataclass(frozen=True)
class FileChange:
    """A workspace file written at ``modified`` (its size then, in bytes)."""

    path: str
    modified: datetime
    size_bytes: int


@dataclass(frozen=True)
class FactChange:
    """A fact ``saved``, ``superseded`` (by a newer one) or ``forgotten`` at ``at``."""

    kind: FactChangeKind
    at: datetime
    fact: Fact


@dataclass(frozen=True)
class RecentActivity:
    """Changes at or after ``since``, newest first; ``more_*`` count what ``limit`` left out."""

    since: datetime
    files: tuple[FileChange, ...]
    facts: tuple[FactChange, ...]
    more_files: int = 0
    more_facts: int = 0


def fact_changes(facts: Iterable[Fact], since: datetime) -> list[FactChange]:
    """Every save, supersession and forgetting at or after ``since``, newest first."""
    changes: list[FactChange] = []
    for fact in facts:
        if fact.recorded_at >= since:
            changes.append(FactChange("saved", fact.recorded_at, fact))
        if fact.forgotten_at is not None and fact.forgotten_at >= since:
            changes.append(FactChange("forgotten", fact.forgotten_at, fact))
        elif fact.valid_to is not None and fact.valid_to >= since:
            changes.append(FactChange("superseded", fact.valid_to, fact))
    return sorted(changes, key=lambda change: change.at, reverse=True)


def collect_activity(
    files: Sequence[tuple[str, float, int]],
    facts: Iterable[Fact],
    since: datetime,
    limit: int,
) -> RecentActivity:
    """The report from ``Workspace.modified_files(since)`` and every fact (with history)."""
    changed = fact_changes(facts, since)
    file_changes = [
        FileChange(path, datetime.fromtimestamp(mtime, UTC), size) for path, mtime, size in files
    ]
    return RecentActivity(
        since=since,
        files=tuple(file_changes[:limit]),
        facts=tuple(changed[:limit]),
        more_files=max(len(file_changes) - limit, 0),
        more_facts=max(len(changed) - limit, 0),
    )
