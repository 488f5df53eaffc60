"""Daily notes: ``memory/YYYY-MM-DD.md``, append-only, safe under concurrent writers.

Each append takes an exclusive OS lock on the note, learns where the new text starts
(how many lines the note has and how it ends), writes the text in one ``write`` call and
fsyncs, all before releasing the lock. Threads and processes appending to the same note
therefore never lose or interleave a line, and the line numbers each caller gets back
are exact. A process remembers what its last append left (the note's size, change time
and line count): when the note is still exactly that, the next append reads nothing of
it; otherwise (another writer, an edit by hand) it reads the note once to count.

A writer killed inside its ``write`` (SIGKILL, an OOM kill) can leave part of its
entry: Linux checks for fatal signals between pages. So an append first records the
note's size before and after it in a hidden journal beside the note
(``.YYYY-MM-DD.md.append``) and removes it once the entry is whole on disk. The next
memdir process that locks the note (an append, ``repair_interrupted_appends`` before a
sync) finds a journal whose append never finished, cuts the note back to its size
before, and removes the journal; a note already at its size after (the writer died
after the write) keeps its entry.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import InvalidInputError
from memdir.workspace.atomic import check_size, disk_errors
from memdir.workspace.locking import lock_file
from memdir.workspace.paths import resolve_inside

logger = logging.getLogger(__name__)

MEMORY_DIR = "memory"
DAILY_NOTE_NAME = re.compile(r"\d{4}-\d{2}-\d{2}\.md")


@dataclass(frozen=True)
class NoteLocation:
    """Where appended text landed: workspace-relative path, 1-based inclusive lines."""

    path: str
    start_line: int
    end_line: int

    def cite(self) -> str:
        """Return the ``path:start-end`` citation used in search results."""
        return f"{self.path}:{self.start_line}-{self.end_line}"


def daily_note_name(date: dt.date) -> str:
    """Return the workspace-relative path of the daily note for ``date``."""
    return f"{MEMORY_DIR}/{date.isoformat()}.md"


def _normalise_entry(text: str) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"daily note text must be a string, got {type(text).__name__}")
    body = text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    if not body.strip():
        raise InvalidInputError(
            f"daily note text {text!r} is empty; pass the note to append as non-empty text"
        )
    return body + "\n"


def _separator(state: NoteState, heading: str) -> str:
    """Text to put between the current content and the new entry."""
    if not state.size:
        return f"# {heading}\n\n"
    if state.tail.endswith(b"\n\n"):
        return ""
    if state.tail.endswith(b"\n"):
        return "\n"
    return "\n\n"


@dataclass(frozen=True)
class NoteState:
    """What an append needs of a note: its size, line count and last two bytes, and the
    stat (device, inode, size, change time) they were taken at."""

    stat: tuple[int, int, int, int]
    newlines: int
    tail: bytes

    @property
    def size(self) -> int:
        return self.stat[2]


_LEFT: dict[Path, NoteState] = {}  # what this process's last append left in each note


def _stat_key(path: Path) -> tuple[int, int, int, int]:
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise InvalidInputError(
            f"{path.name!r} in {str(path.parent)!r} is not a regular file; move it away so "
            "memdir can write the daily note there"
        )
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _note_state(path: Path) -> NoteState:
    """The note as the last append of this process left it, or (changed since) read once.
    A daily-note path that is not a regular file (a FIFO, a device) is refused instead of
    read, which would block forever."""
    key = _stat_key(path)
    left = _LEFT.get(path)
    if left is not None and left.stat == key:
        return left
    data = path.read_bytes()
    return NoteState((*key[:2], len(data), key[3]), data.count(b"\n"), data[-2:])


def _append_bytes(path: Path, data: bytes, size_before: int) -> None:
    """Append ``data`` whole, or leave the file at ``size_before`` bytes and raise.

    A write can fail half-way (a full disk writes what fits, then ENOSPC); the
    part written is cut off again so the note never keeps a torn entry.
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        try:
            os.ftruncate(fd, size_before)
            os.fsync(fd)
        except OSError as exc:  # cannot undo: say so, the caller's error follows
            logger.error("could not cut a failed append off %s: %s", path, exc)
        raise
    finally:
        os.close(fd)


JOURNAL_SUFFIX = ".append"


def journal_of(path: Path) -> Path:
    """The hidden journal of an append in progress to the note at ``path``."""
    return path.with_name(f".{path.name}{JOURNAL_SUFFIX}")


def _repair_torn_append(path: Path) -> None:
    """Cut off what a writer killed mid-append left (the caller holds the note's lock)."""
    journal = journal_of(path)
    try:
        before, after = (int(v) for v in journal.read_text(encoding="ascii").split())
    except FileNotFoundError:
        return
    except (ValueError, OSError):  # a journal cut short: its append never started writing
        before = after = -1
    with contextlib.suppress(FileNotFoundError):
        size = path.stat().st_size
        if 0 <= before < size < after:
            os.truncate(path, before)
            logger.warning(
                "cut %d bytes of an interrupted append off %s (its writer was killed)",
                size - before, path,
            )  # fmt: skip
    journal.unlink(missing_ok=True)


def repair_interrupted_appends(root: Path) -> int:
    """Repair every daily note of ``root`` whose last append was interrupted; how many."""
    repaired = 0
    memory = root / MEMORY_DIR
    if not memory.is_dir():
        return 0
    for journal in memory.rglob(f".*.md{JOURNAL_SUFFIX}"):
        note = journal.with_name(journal.name[1 : -len(JOURNAL_SUFFIX)])
        try:
            with lock_file(note):
                _repair_torn_append(note)
        except FileNotFoundError:  # the note is gone: so is what the journal was about
            journal.unlink(missing_ok=True)
        repaired += 1
    return repaired


def append_daily(root: Path, text: str, date: dt.date | None = None) -> NoteLocation:
    """Append ``text`` to the daily note of ``date`` (default: today, local time).

    A new note starts with a ``# YYYY-MM-DD`` heading; entries are separated by
    a blank line. Line endings are normalised to ``\\n``. Returns where the text
    landed, relative to ``root``.
    """
    day = date or dt.date.today()
    body = _normalise_entry(text)
    check_size(body, "daily note text")
    relative = daily_note_name(day)
    path = resolve_inside(root, relative)
    with disk_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        with lock_file(path, create=True):
            _repair_torn_append(path)
            state = _note_state(path)
            prefix = _separator(state, day.isoformat())
            start_line = state.newlines + prefix.count("\n") + 1
            data = (prefix + body).encode("utf-8")
            journal = journal_of(path)
            journal.write_text(f"{state.size} {state.size + len(data)}", encoding="ascii")
            try:
                _append_bytes(path, data, state.size)
            finally:  # whole, or cut back by _append_bytes: nothing left to repair
                journal.unlink(missing_ok=True)
            newlines = state.newlines + data.count(b"\n")
            _LEFT[path] = NoteState(_stat_key(path), newlines, (state.tail + data)[-2:])
    return NoteLocation(relative, start_line, start_line + body.count("\n") - 1)
