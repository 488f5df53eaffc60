"""The loss guard: a rewrite of MEMORY.md or USER.md that loses knowledge is refused.

What counts as *loss* (docs/curation.md, "The loss guard"):

* An *entry* is one non-empty line that is a bullet or a paragraph line; headings,
  rules, fences and tables are structure. Entries are compared normalised
  (``normalise_entry``): bullet and checkbox markers, HTML comments such as fact
  markers, emphasis, case, runs of white space and trailing punctuation do not count.
* Only *knowledge* can be lost. Two kinds of entry hold none: placeholders (a field
  with no value, ``- **Name:**``, or only a parenthesised hint, ``(optional)``,
  ``(none recorded yet)``) and the lines of the file's own seeded template (memdir
  wrote them; ``memdir init`` writes them again). Filling in a template loses nothing.
* An old entry is *kept* when the new text has it, and *revised* when the new text
  replaces it with a revision: the same field with another value (``Timezone: UTC``
  -> ``Timezone: Europe/Berlin``, when the field occurs once on each side), a close
  rewording of it (``difflib`` ratio >= ``REVISION_RATIO``, each new entry standing
  for one old entry at most), or a merged entry that holds every word of it.
  Correcting one entry of a two-entry file keeps both.
* Every other old entry is *lost*. A rewrite is accepted when kept + revised is at
  least ``min_kept`` (default 75%) of the old knowledge entries.

A refused rewrite is logged and reported, the file stays as it was, and the proposed
text is kept as ``<root>/.history/<name>/<UTC timestamp>-refused.md`` so whatever new
the proposal held is not lost either. An accepted rewrite first copies the old text to
``<root>/.history/<name>/<UTC timestamp>.md``. The folder starts with a dot, so
discovery (``memdir.workspace.discovery``) skips it and old versions never show up in
search. The replacement itself is atomic (temp file + rename) and holds the file's
lock, so a concurrent append or edit is never lost.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from memdir.errors import InvalidInputError, NextStep
from memdir.workspace import lock_file, read_markdown, write_atomic
from memdir.workspace.atomic import create_exclusive
from memdir.workspace.seeding import load_template

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]
HISTORY_DIR = ".history"
REFUSED_SUFFIX = "-refused"
DEFAULT_MIN_KEPT = 0.75
REVISION_RATIO = 0.6
TEMPLATES = {"USER.md": "USER.md"}  # guarded file -> its seeded template (no $name in it)
MAX_LISTED_LOSSES = 3

_COMMENT = re.compile(r"<!--.*?-->")
_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_EMPHASIS = re.compile(r"[*_`~]")
_SPACES = re.compile(r"\s+")
_WORDISH = re.compile(r"\w")
_FIELD = re.compile(r"^(?P<label>[A-Za-z][\w '/()-]{0,39}?)\s*:(?!//)\s*(?P<value>.*)$")
_HINT = re.compile(r"^\((?:[^()]|\([^()]*\))*\)$")
_PLACEHOLDER_VALUES = frozenset({"", "...", "…", "-", "?", "tbd", "todo"})
_WORD = re.compile(r"\w+")

UpdateStatus = Literal["written", "refused", "unchanged", "dry_run", "proposed"]


def local_now() -> datetime:
    """The current time, timezone-aware, in the local zone."""
    return datetime.now().astimezone()


def _plain(line: str) -> str:
    """``line`` without comments, list markers and emphasis, spaces folded (case kept)."""
    text = _COMMENT.sub(" ", line)
    text = _MARKER.sub("", text)
    text = _EMPHASIS.sub("", text)
    return _SPACES.sub(" ", text).strip()


def normalise_entry(line: str) -> str:
    """``line`` as compared by the guard: no markers, comments, emphasis or case."""
    return _plain(line).lower().rstrip(".;,:!").strip()


def is_entry_line(line: str) -> bool:
    """True for a bullet or paragraph line; False for blanks, headings, rules, fences."""
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", "```", "~~~", "|")):
        return False
    return bool(_WORDISH.search(_COMMENT.sub("", stripped)))


def memory_entries(text: str) -> list[str]:
    """The normalised entries of ``text``, in order, duplicates kept."""
    entries = []
    for line in text.splitlines():
        if is_entry_line(line):
            normalised = normalise_entry(line)
            if normalised:
                entries.append(normalised)
    return entries


@dataclass(frozen=True)
class Entry:
    """One entry as the guard weighs it: its normalised text and, for a field, its parts."""

    text: str
    label: str | None = None
    value: str = ""

    @property
    def placeholder(self) -> bool:
        """A field without a value, or a parenthesised hint: nothing learned yet."""
        if self.label is not None:
            return self.value in _PLACEHOLDER_VALUES or bool(_HINT.match(self.value))
        return bool(_HINT.match(self.text))


def read_entry(line: str) -> Entry:
    """The entry a line holds: ``Label: value`` lines are fields (``http://...`` is not)."""
    plain = _plain(line)
    text = plain.lower().rstrip(".;,:!").strip()
    field = _FIELD.match(plain)
    if field is None or len(field["label"].split()) > 5:
        return Entry(text)
    value = field["value"].strip().lower().rstrip(".;,!").strip()
    return Entry(text, field["label"].strip().lower(), value)


def knowledge_entries(text: str, template: str = "") -> dict[str, Entry]:
    """The distinct entries of ``text`` that hold knowledge, by normalised text:
    placeholders and the lines of ``template`` left out."""
    scaffold = set(memory_entries(template))
    found: dict[str, Entry] = {}
    for line in text.splitlines():
        if not is_entry_line(line):
            continue
        entry = read_entry(line)
        if entry.text and not entry.placeholder and entry.text not in scaffold:
            found.setdefault(entry.text, entry)
    return found


@dataclass(frozen=True)
class LossCheck:
    """How much of the old file's knowledge a new text keeps.

    ``total`` old knowledge entries; ``kept`` found as they were; ``revised`` replaced
    by a revision (same field, close rewording, merged entry); ``lost`` the others,
    normalised, in file order.
    """

    total: int
    kept: int
    min_kept: float
    revised: int = 0
    lost: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        return 1.0 if self.total == 0 else (self.kept + self.revised) / self.total

    @property
    def accepted(self) -> bool:
        return self.ratio >= self.min_kept

    def describe(self) -> str:
        """``keeps 1 of 2 entries (50%; 0 revised), losing 'alice owns billing'``."""
        shown = ", ".join(repr(text) for text in self.lost[:MAX_LISTED_LOSSES])
        more = len(self.lost) - MAX_LISTED_LOSSES
        losing = f", losing {shown}" + (f" and {more} more" if more > 0 else "") if shown else ""
        return (
            f"keeps {self.kept + self.revised} of {self.total} entries ({self.ratio:.0%}; "
            f"{self.revised} revised){losing}"
        )


def check_loss(
    old_text: str, new_text: str, min_kept: float = DEFAULT_MIN_KEPT, *, template: str = ""
) -> LossCheck:
    """Weigh what ``new_text`` keeps of ``old_text``'s knowledge (module docstring).

    ``template`` is the file's seeded template, whose lines hold no knowledge.
    """
    if not 0.0 <= min_kept <= 1.0:
        raise InvalidInputError(f"min_kept must be between 0 and 1, got {min_kept!r}")
    old = knowledge_entries(old_text, template)
    new = {entry.text: entry for entry in map(read_entry, _entry_lines(new_text))}
    kept = [text for text in old if text in new]
    missing = [entry for text, entry in old.items() if text not in new]
    fresh = [entry for text, entry in new.items() if text not in old and not entry.placeholder]
    revised = _revisions(missing, fresh, old.values(), new.values())
    lost = tuple(entry.text for entry in missing if entry.text not in revised)
    return LossCheck(len(old), len(kept), min_kept, revised=len(revised), lost=lost)


def _entry_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if is_entry_line(line) and normalise_entry(line)]


def _revisions(
    missing: Sequence[Entry],
    fresh: Sequence[Entry],
    old_all: Iterable[Entry],
    new_all: Iterable[Entry],
) -> set[str]:
    """The missing old entries that a fresh new entry revises (texts of the old ones)."""
    old_labels = Counter(entry.label for entry in old_all if entry.label)
    new_labels = Counter(entry.label for entry in new_all if entry.label)
    revised: set[str] = set()
    taken: set[str] = set()
    for entry in missing:  # the same field, once on each side, with another value
        if entry.label and old_labels[entry.label] == 1 and new_labels[entry.label] == 1:
            match = next((f for f in fresh if f.label == entry.label), None)
            if match is not None:
                revised.add(entry.text)
                taken.add(match.text)
    for entry in missing:  # a close rewording (one old entry per new one) or a merge
        if entry.text in revised:
            continue
        words = set(_WORD.findall(entry.text))
        best, best_ratio = None, REVISION_RATIO
        for candidate in fresh:
            if len(words) >= 2 and words <= set(_WORD.findall(candidate.text)):
                best, best_ratio = candidate, 2.0  # merged: it holds every word
                break
            if candidate.text in taken:
                continue
            ratio = difflib.SequenceMatcher(None, entry.text, candidate.text).ratio()
            if ratio >= best_ratio:
                best, best_ratio = candidate, ratio
        if best is not None:
            revised.add(entry.text)
            taken.add(best.text)
    return revised


def template_for(name: str) -> str:
    """The seeded template of the guarded file ``name`` ("" when it has none)."""
    template = TEMPLATES.get(name)
    return load_template(template) if template else ""


@dataclass(frozen=True)
class FileUpdate:
    """What happened to one guarded file.

    ``status`` is ``written``, ``refused`` (the loss guard said no; ``refusal``
    says why), ``unchanged`` (same text) or ``dry_run`` (checked, not written).
    ``history`` is a path relative to ``root``: the backup of the old text when a
    rewrite was written, the kept proposal when one was refused; ``diff`` the
    unified diff from the old to the proposed text.
    """

    name: str
    status: UpdateStatus
    check: LossCheck
    diff: str = ""
    history: str | None = None
    refusal: str | None = None

    @property
    def written(self) -> bool:
        return self.status == "written"


def unified_diff(old_text: str, new_text: str, name: str) -> str:
    """A unified diff of two versions of ``name`` (empty when they are equal)."""
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def backup_to_history(root: Path, name: str, text: str, now: datetime, suffix: str = "") -> str:
    """Keep ``text`` as ``.history/<name>/<timestamp><suffix>.md`` under ``root``; return
    that path."""
    folder = root / HISTORY_DIR / name
    folder.mkdir(parents=True, exist_ok=True)
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    for attempt in range(1000):
        stem = (stamp if attempt == 0 else f"{stamp}-{attempt}") + suffix
        if create_exclusive(folder / f"{stem}.md", text):
            return f"{HISTORY_DIR}/{name}/{stem}.md"
    raise InvalidInputError(  # pragma: no cover - a thousand backups in one microsecond
        f"could not find a free history file name for {name!r} in {folder}; "
        "clear old backups from that folder"
    )


def _read_or_empty(path: Path) -> str:
    try:
        return read_markdown(path)
    except FileNotFoundError:
        return ""


def _with_newline(text: str) -> str:
    body = text.replace("\r\n", "\n").strip("\n")
    return body + "\n" if body else ""


@dataclass(frozen=True)
class Rewrite:
    """A guarded rewrite collected under ``proposing``: ``root/name`` from ``old`` to ``new``."""

    root: Path
    name: str
    old: str
    new: str


_proposing: ContextVar[tuple[list[Rewrite], Path | None] | None] = ContextVar(
    "memdir_proposing", default=None
)


@contextmanager
def proposing(only: Path | None = None) -> Iterator[list[Rewrite]]:
    """Within the block, ``replace_guarded`` writes nothing: each rewrite the loss guard
    accepts is collected into the list (status ``proposed``) for a person to review.
    With ``only``, just the rewrites of files in that folder are; the others write."""
    collected: list[Rewrite] = []
    token = _proposing.set((collected, only))
    try:
        yield collected
    finally:
        _proposing.reset(token)


def replace_guarded(
    root: Path,
    name: str,
    new_text: str,
    *,
    min_kept: float = DEFAULT_MIN_KEPT,
    clock: Clock = local_now,
    dry_run: bool = False,
) -> FileUpdate:
    """Replace ``root/name`` with ``new_text`` if the loss guard accepts it.

    With ``dry_run`` the check and diff are computed and nothing is written. A
    refused proposal is kept under ``.history/`` (module docstring). Raises
    ``InvalidInputError`` for an empty ``new_text`` (use the file tools to clear a
    file on purpose).
    """
    proposed = _with_newline(new_text)
    if not proposed:
        raise InvalidInputError(
            f"the new text for {name!r} is empty; a curation rewrite must keep content",
            next_step=NextStep("clear the file with {} if that is really meant", "write_file"),
        )
    path = root / name
    if dry_run:
        old = _read_or_empty(path)
        return _decide(name, old, proposed, min_kept, dry_run=True)
    proposing_now = _proposing.get()
    collected = None if proposing_now is None else proposing_now[0]
    if proposing_now is not None and proposing_now[1] not in (None, root):
        collected = None  # ``proposing(only=...)`` another folder: this one writes
    if collected is not None:  # under review (``proposing``): kept for a person, not written
        old = _read_or_empty(path)
        update = _decide(name, old, proposed, min_kept, dry_run=True)
        if update.status == "dry_run":
            collected.append(Rewrite(root, name, old, proposed))
            return replace(update, status="proposed")
        if update.status == "unchanged":
            return update  # a refused one is kept under .history/ as ever, below
    root.mkdir(parents=True, exist_ok=True)
    with lock_file(path, create=True):
        old = _read_or_empty(path)
        update = _decide(name, old, proposed, min_kept, dry_run=False)
        if update.status == "refused":
            return _keep_refused(root, update, proposed, clock())
        if update.status != "written":
            return update
        history = backup_to_history(root, name, old, clock()) if old.strip() else None
        write_atomic(path, proposed)
    logger.info("rewrote %s in %s (%s)", name, root, update.check.describe())
    return FileUpdate(name, "written", update.check, update.diff, history=history)


def _keep_refused(root: Path, update: FileUpdate, proposed: str, now: datetime) -> FileUpdate:
    kept = backup_to_history(root, update.name, proposed, now, REFUSED_SUFFIX)
    refusal = f"{update.refusal}; the proposal is kept in {kept}"
    logger.warning("%s", refusal)
    return FileUpdate(update.name, "refused", update.check, update.diff, kept, refusal)


def _decide(name: str, old: str, proposed: str, min_kept: float, *, dry_run: bool) -> FileUpdate:
    check = check_loss(old, proposed, min_kept, template=template_for(name))
    diff = unified_diff(old, proposed, name)
    if _with_newline(old) == proposed:
        return FileUpdate(name, "unchanged", check)
    if not check.accepted:
        refusal = (
            f"refused to rewrite {name}: the new text {check.describe()}, below the "
            f"{min_kept:.0%} the loss guard requires; the file is unchanged"
        )
        if dry_run:
            logger.warning("%s", refusal)
        return FileUpdate(name, "refused", check, diff, refusal=refusal)
    return FileUpdate(name, "dry_run" if dry_run else "written", check, diff)
