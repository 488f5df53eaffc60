"""Consolidation ("emergence"): what stays true across days moves into MEMORY.md.

``consolidate()`` reads the daily notes ``memory/YYYY-MM-DD.md`` of the last
``days`` days (default 7, today included) and MEMORY.md, and promotes stable
entries into MEMORY.md under a ``## Consolidated YYYY-MM-DD`` heading.

With a model, the model answers a ``ConsolidationPlan``: entries to add, and
optionally groups of existing MEMORY.md entries to merge into one. Without a
model the heuristic promotes a daily-note line (a bullet or paragraph line,
compared normalised, fact markers removed) when it

- recurs on at least 2 different days, or
- is marked as a decision, a preference or something to remember: a fact
  marker with ``cat=decision`` / ``cat=preference``, or the words decided,
  decision, prefer(s), preference or remember in the line,

and it is not in MEMORY.md yet, nor a near-duplicate of an entry there
(``facts.phrasing.near_duplicate``: "We chose PostgreSQL for the billing
service" when MEMORY.md says "We chose PostgreSQL for billing"). Of two
near-duplicate lines only one is promoted, the fuller. Forget and reinforce
lines, facts that a later line supersedes or forgets, headings and questions are
never promoted. The heuristic never merges and never drops an entry.

Either way the rewrite goes through the loss guard (``guard``): it must keep
75% of the old entries, the old file is backed up under ``.history/``, and the
result carries a unified diff. ``dry_run=True`` computes the diff and writes
nothing. When the model fails (down, timing out, JSON that does not validate)
the heuristic runs instead, with a logged warning and the failure in
``ConsolidationResult.error``.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pydantic

from memdir.curate.guard import (
    DEFAULT_MIN_KEPT,
    Clock,
    FileUpdate,
    is_entry_line,
    local_now,
    memory_entries,
    normalise_entry,
    replace_guarded,
)
from memdir.errors import ChatModelError, InvalidInputError, NotFoundError
from memdir.facts.phrasing import near_duplicate
from memdir.llm import ChatModel, Message, complete_structured
from memdir.progress import Progress, ProgressUpdate
from memdir.workspace import Workspace, read_markdown

logger = logging.getLogger(__name__)

MEMORY_FILE = "MEMORY.md"
MAX_PROMPT_NOTE_CHARS = 60_000

_COMMENT = re.compile(r"<!--.*?-->")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_MARKED_CATEGORY = re.compile(r"memdir:fact\b[^>]*\bcat=(?:decision|preference)\b")
_MARKED_WORDS = re.compile(
    r"\b(?:decided|decision|prefers?|preferred|preference|remember)\b", re.IGNORECASE
)
_SKIPPED_MARKERS = re.compile(r"memdir:(?:forget|reinforce)\b")
_FACT_ID = re.compile(r"memdir:fact\b[^>]*?\bid=(f-[a-z0-9]+)")
_RETIRED_ID = re.compile(r"memdir:(?:fact\b[^>]*?\bsupersedes|forget\b[^>]*?\bid)=(f-[a-z0-9]+)")


class ConsolidationMerge(pydantic.BaseModel):
    """Existing MEMORY.md entries (quoted as they are) to replace by one merged entry."""

    replace: list[str]
    merged: str


class ConsolidationPlan(pydantic.BaseModel):
    """The model's answer: stable entries to add to MEMORY.md, and optional merges."""

    entries_to_add: list[str] = pydantic.Field(default_factory=list)
    merges: list[ConsolidationMerge] = pydantic.Field(default_factory=list)
    reason: str = ""


@dataclass(frozen=True)
class DailyNote:
    """One daily note read for consolidation."""

    date: dt.date
    path: str
    text: str


@dataclass(frozen=True)
class ConsolidationResult:
    """What a consolidation found and did; ``diff`` is the unified diff of MEMORY.md."""

    method: str
    notes: tuple[str, ...]
    added: tuple[str, ...] = ()
    merged: int = 0
    update: FileUpdate | None = None
    dry_run: bool = False
    error: str | None = None
    proposals: tuple[str, ...] = ()  # under review (curate.review): the proposals made

    @property
    def diff(self) -> str:
        return "" if self.update is None else self.update.diff

    @property
    def written(self) -> bool:
        return self.update is not None and self.update.written


def read_recent_notes(workspace: Workspace, days: int, today: dt.date) -> list[DailyNote]:
    """The daily notes dated within the ``days`` days up to ``today``, oldest first."""
    if days < 1:
        raise InvalidInputError(f"days must be 1 or more, got {days!r}")
    first = today - dt.timedelta(days=days - 1)
    notes = []
    for found in workspace.list_daily_notes():
        try:
            date = dt.date.fromisoformat(found.path.name.removesuffix(".md"))
        except ValueError:
            continue  # a name like 2025-13-40.md is not a date
        if first <= date <= today:
            notes.append(DailyNote(date, found.relpath, read_markdown(found.path, strict=False)))
    return sorted(notes, key=lambda note: (note.date, note.path))


def display_entry(line: str) -> str:
    """A daily-note line as it would read in MEMORY.md: no marker, no bullet."""
    return _BULLET.sub("", _COMMENT.sub("", line)).strip()


def promote_heuristically(notes: Sequence[DailyNote], memory_text: str) -> list[str]:
    """The entries the heuristic promotes (see the module docstring), in first-seen order."""
    known = set(memory_entries(memory_text))
    retired = {m.group(1) for note in notes for m in _RETIRED_ID.finditer(note.text)}
    days_seen: dict[str, set[dt.date]] = {}
    marked: set[str] = set()
    shown: dict[str, str] = {}
    for note in notes:
        for line in note.text.splitlines():
            if not is_entry_line(line) or _SKIPPED_MARKERS.search(line):
                continue
            fact = _FACT_ID.search(line)
            if fact is not None and fact.group(1) in retired:
                continue  # a later line superseded or forgot this fact
            text = display_entry(line)
            key = normalise_entry(line)
            if len(key) < 4 or text.endswith("?") or key in known:
                continue
            shown.setdefault(key, text)
            days_seen.setdefault(key, set()).add(note.date)
            if _MARKED_CATEGORY.search(line) or _MARKED_WORDS.search(text):
                marked.add(key)
    stable = [text for key, text in shown.items() if len(days_seen[key]) >= 2 or key in marked]
    return _without_near_duplicates(stable, [display_entry(e) for e in memory_text.splitlines()])


def _without_near_duplicates(candidates: Sequence[str], existing: Sequence[str]) -> list[str]:
    """``candidates`` less those that say what MEMORY.md or another candidate says; of two
    near-duplicate candidates the fuller one is kept, in the first one's place."""
    kept: list[str] = []
    for text in candidates:
        if any(near_duplicate(entry, text) for entry in existing if entry):
            continue
        twin = next((i for i, other in enumerate(kept) if near_duplicate(other, text)), None)
        if twin is None:
            kept.append(text)
        elif near_duplicate(kept[twin], text) == "fuller":
            kept[twin] = text
    return kept


def apply_plan(
    memory_text: str, plan: ConsolidationPlan, today: dt.date
) -> tuple[str, list[str], int]:
    """MEMORY.md after ``plan``: merges in place, new entries appended; (text, added, merged)."""
    lines = memory_text.splitlines()
    merged = 0
    for merge in plan.merges:
        targets = {normalise_entry(item) for item in merge.replace if normalise_entry(item)}
        hits = [
            i
            for i, line in enumerate(lines)
            if is_entry_line(line) and normalise_entry(line) in targets
        ]
        if not hits or not merge.merged.strip():
            logger.info("consolidation merge skipped: none of %r is in MEMORY.md", merge.replace)
            continue
        lines[hits[0]] = f"- {display_entry(merge.merged)}"
        for index in reversed(hits[1:]):
            del lines[index]
        merged += 1
    text = "\n".join(lines)
    return (*_append_entries(text, plan.entries_to_add, today), merged)


def _append_entries(text: str, entries: Sequence[str], today: dt.date) -> tuple[str, list[str]]:
    known = set(memory_entries(text))
    added: list[str] = []
    for entry in entries:
        shown, key = display_entry(entry), normalise_entry(entry)
        if key and key not in known:
            known.add(key)
            added.append(shown)
    if not added:
        return text, []
    section = f"## Consolidated {today.isoformat()}\n" + "\n".join(f"- {e}" for e in added)
    body = text.rstrip("\n")
    return (f"{body}\n\n{section}\n" if body else f"{section}\n"), added


_SYSTEM_PROMPT = """\
You maintain MEMORY.md, the curated long-term memory of an AI agent. Below are MEMORY.md \
and the agent's daily notes of the last days. Promote what is stable and durable \
(decisions, preferences, lasting facts, recurring themes) that MEMORY.md lacks.
- entries_to_add: one short sentence each; never repeat what MEMORY.md already says.
- merges: optional; each lists existing MEMORY.md entries, quoted exactly, that say the \
same thing, and the one merged entry to replace them with.
- reason: one sentence.
Do not drop entries; a rewrite that loses many entries is refused."""


def build_consolidation_prompt(notes: Sequence[DailyNote], memory_text: str) -> list[Message]:
    """The messages that ask the model for a ``ConsolidationPlan`` (newest notes kept)."""
    parts: list[str] = []
    room = MAX_PROMPT_NOTE_CHARS
    for note in reversed(notes):
        if len(note.text) > room:
            break
        parts.insert(0, f"## {note.path}\n{note.text.strip()}")
        room -= len(note.text)
    body = f"## MEMORY.md\n{memory_text.strip() or '(empty)'}\n\n# Daily notes\n\n" + "\n\n".join(
        parts
    )
    return [Message("system", _SYSTEM_PROMPT), Message("user", body)]


def consolidate(
    workspace: Workspace,
    *,
    model: ChatModel | None = None,
    days: int = 7,
    today: dt.date | None = None,
    dry_run: bool = False,
    min_kept: float = DEFAULT_MIN_KEPT,
    clock: Clock = local_now,
    progress: Progress | None = None,
) -> ConsolidationResult:
    """Promote stable entries of recent daily notes into MEMORY.md (see the module docstring).

    ``progress`` hears of the notes read and of the wait for the model.
    """
    report = progress or (lambda update: None)
    day = today or clock().date()
    notes = read_recent_notes(workspace, days, day)
    paths = tuple(note.path for note in notes)
    report(ProgressUpdate("reading daily notes", len(notes), len(notes), "notes"))
    memory_text = _read_memory(workspace)
    if model is not None:
        report(ProgressUpdate("asking the model", 0, None, "", f"{len(notes)} notes"))
    method, plan, error = _plan(notes, memory_text, model)
    new_text, added, merged = apply_plan(memory_text, plan, day)
    if not added and not merged:
        return ConsolidationResult(method, paths, dry_run=dry_run, error=error)
    update = replace_guarded(
        workspace.root, MEMORY_FILE, new_text, min_kept=min_kept, clock=clock, dry_run=dry_run
    )
    logger.info(
        "consolidation (%s): %d added, %d merged, %s", method, len(added), merged, update.status
    )
    return ConsolidationResult(method, paths, tuple(added), merged, update, dry_run, error)


def _plan(
    notes: Sequence[DailyNote], memory_text: str, model: ChatModel | None
) -> tuple[str, ConsolidationPlan, str | None]:
    """(method, plan, model error): the model's plan, or the heuristic's when it fails."""
    if model is not None:
        try:
            plan = complete_structured(
                model, build_consolidation_prompt(notes, memory_text), ConsolidationPlan
            )
        except ChatModelError as exc:
            logger.warning("consolidation fell back to the heuristic: the model failed: %s", exc)
            error = f"the model failed ({exc}); heuristic used"
        else:
            return "model", plan, None
    else:
        error = None
    promoted = promote_heuristically(notes, memory_text)
    return "heuristic", ConsolidationPlan(entries_to_add=promoted), error


def _read_memory(workspace: Workspace) -> str:
    try:
        return workspace.read_file(MEMORY_FILE)
    except NotFoundError:
        return ""
