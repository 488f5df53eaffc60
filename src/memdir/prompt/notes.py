"""Recent daily notes at session start: today's and yesterday's, tail first.

As OpenClaw's agents read ``memory/<today>.md`` and ``memory/<yesterday>.md`` when they
wake, the prompt carries the newest daily notes within ``budget_chars``. The newest
note is planned first; a note longer than the room left keeps its end (the latest
entries) behind ``NOTES_HEAD_MARKER``, cut at a line start. memdir's own markers (the
``<!-- memdir:... -->`` comments of fact lines) are dropped first: they cost room and
tell the model nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memdir.prompt.inputs import BootstrapSource
from memdir.prompt.truncation import FileStatus, InjectedFile

NOTES_HEAD_MARKER = "[...earlier entries not shown; read the file for them...]"
MIN_NOTE_CHARS = 64
_MARKUP = re.compile(r"[ \t]*<!--\s*(?:memdir|camel):.*?-->", re.DOTALL)


def strip_markup(text: str) -> str:
    """``text`` without memdir's own HTML-comment markers."""
    return _MARKUP.sub("", text)


def keep_tail(text: str, budget: int) -> str:
    """The end of ``text`` that fits in ``budget`` with the marker, from a line start."""
    room = budget - len(NOTES_HEAD_MARKER) - 1
    if room <= 0:
        return ""
    tail = text[len(text) - room :]
    newline = tail.find("\n")
    if 0 <= newline < len(tail) - 1:
        tail = tail[newline + 1 :]
    return f"{NOTES_HEAD_MARKER}\n{tail}"


def plan_recent_notes(notes: Sequence[BootstrapSource], budget_chars: int) -> list[InjectedFile]:
    """Fit ``notes`` (newest first) into ``budget_chars``; missing notes are dropped."""
    room = budget_chars
    planned: list[InjectedFile] = []
    for note in notes:
        if note.content is None:
            continue
        text = strip_markup(note.content).strip()
        if not text:
            continue
        if room < MIN_NOTE_CHARS:
            planned.append(InjectedFile(note.name, FileStatus.SKIPPED, len(note.content), None))
            continue
        if len(text) <= room:
            planned.append(InjectedFile(note.name, FileStatus.OK, len(note.content), text))
        else:
            text = keep_tail(text, room)
            planned.append(InjectedFile(note.name, FileStatus.TRUNCATED, len(note.content), text))
        room = max(0, room - len(text))
    return planned
