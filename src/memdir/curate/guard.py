"""The loss guard: a rewrite of MEMORY.md or USER.md that drops too much is refused.

An *entry* of such a file is one non-empty line that is a bullet or a paragraph
line; headings, rules and fences are structure, not entries. Entries are
compared normalised (``normalise_entry``): bullet and checkbox markers, HTML
comments such as fact markers, emphasis characters, case, runs of white space
and trailing punctuation do not count. A rewrite is accepted when it keeps at
least ``min_kept`` (default 75%) of the old distinct entries; otherwise it is
refused, logged, and the file stays as it was.

An accepted rewrite first copies the old text to
``<root>/.history/<name>/<UTC timestamp>.md``. The folder starts with a dot, so
discovery (``memdir.workspace.discovery``) skips it and old versions never show
up in search. The replacement itself is atomic (temp file + rename) and holds
the file's lock, so a concurrent append or edit is never lost.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from memdir.errors import InvalidInputError, NextStep
from memdir.workspace import lock_file, read_markdown, write_atomic
from memdir.workspace.atomic import create_exclusive

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]
HISTORY_DIR = ".history"
DEFAULT_MIN_KEPT = 0.75

_COMMENT = re.compile(r"<!--.*?-->")
_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_EMPHASIS = re.compile(r"[*_`~]")
_SPACES = re.compile(r"\s+")
_WORDISH = re.compile(r"\w")

UpdateStatus = Literal["written", "refused", "unchanged", "dry_run"]


def local_now() -> datetime:
    """The current time, timezone-aware, in the local zone."""
    return datetime.now().astimezone()


def normalise_entry(line: str) -> str:
    """``line`` as compared by the guard: no markers, comments, emphasis or case."""
    text = _COMMENT.sub(" ", line)
    text = _MARKER.sub("", text)
    text = _EMPHASIS.sub("", text)
    text = _SPACES.sub(" ", text).strip().lower()
    return text.rstrip(".;,:!").strip()


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
class LossCheck:
    """How many of the old distinct entries a new text keeps."""

    total: int
    kept: int
    min_kept: float

    @property
    def ratio(self) -> float:
        return 1.0 if self.total == 0 else self.kept / self.total

    @property
    def accepted(self) -> bool:
        return self.ratio >= self.min_kept


def check_loss(old_text: str, new_text: str, min_kept: float = DEFAULT_MIN_KEPT) -> LossCheck:
    """Compare the distinct entries of ``old_text`` with those of ``new_text``."""
    if not 0.0 <= min_kept <= 1.0:
        raise InvalidInputError(f"min_kept must be between 0 and 1, got {min_kept!r}")
    old = set(memory_entries(old_text))
    new = set(memory_entries(new_text))
    return LossCheck(total=len(old), kept=len(old & new), min_kept=min_kept)


@dataclass(frozen=True)
class FileUpdate:
    """What happened to one guarded file.

    ``status`` is ``written``, ``refused`` (the loss guard said no; ``refusal``
    says why), ``unchanged`` (same text) or ``dry_run`` (checked, not written).
    ``history`` is the backup's path relative to ``root`` when one was made;
    ``diff`` the unified diff from the old to the proposed text.
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


def backup_to_history(root: Path, name: str, text: str, now: datetime) -> str:
    """Keep ``text`` as ``.history/<name>/<timestamp>.md`` under ``root``; return that path."""
    folder = root / HISTORY_DIR / name
    folder.mkdir(parents=True, exist_ok=True)
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    for attempt in range(1000):
        stem = stamp if attempt == 0 else f"{stamp}-{attempt}"
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

    With ``dry_run`` the check and diff are computed and nothing is written.
    Raises ``InvalidInputError`` for an empty ``new_text`` (use the file tools
    to clear a file on purpose).
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
    root.mkdir(parents=True, exist_ok=True)
    with lock_file(path, create=True):
        old = _read_or_empty(path)
        update = _decide(name, old, proposed, min_kept, dry_run=False)
        if update.status != "written":
            return update
        history = backup_to_history(root, name, old, clock()) if old.strip() else None
        write_atomic(path, proposed)
    logger.info("rewrote %s in %s (kept %d of %d entries)", name, root, *_counts(update))
    return FileUpdate(name, "written", update.check, update.diff, history=history)


def _counts(update: FileUpdate) -> tuple[int, int]:
    return update.check.kept, update.check.total


def _decide(name: str, old: str, proposed: str, min_kept: float, *, dry_run: bool) -> FileUpdate:
    check = check_loss(old, proposed, min_kept)
    diff = unified_diff(old, proposed, name)
    if _with_newline(old) == proposed:
        return FileUpdate(name, "unchanged", check)
    if not check.accepted:
        refusal = (
            f"refused to rewrite {name}: the new text keeps {check.kept} of {check.total} "
            f"entries ({check.ratio:.0%}), below the {min_kept:.0%} the loss guard requires; "
            f"the file is unchanged"
        )
        logger.warning("%s", refusal)
        return FileUpdate(name, "refused", check, diff, refusal=refusal)
    return FileUpdate(name, "dry_run" if dry_run else "written", check, diff)
