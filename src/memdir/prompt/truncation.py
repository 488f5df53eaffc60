"""Fitting bootstrap files into the prompt budget.

Files are taken in order. Each gets ``min(per_file_chars, room)`` characters,
where room is what is left of ``total_chars``. A file over its budget keeps the
first 70% and the last 20% of the budget around ``TRUNCATION_MARKER`` (joined
by newlines). Once less than ``min_room_chars`` of room is left (or none at
all), later files are not injected (status SKIPPED). Missing files use no room;
a missing AGENTS.md (``REQUIRED_FILES``) carries a note saying it is required.

Room shrinks by the injected length, marker included. For budgets of 470
characters or more the marker line fits in the spare 10%, so the injected text
never exceeds the file's budget; below that (only ever the last file, at the
end of the total budget) it may exceed it by at most the marker's length plus
two newlines (47 characters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from memdir.prompt.inputs import BootstrapSource, PromptBudget
from memdir.prompt.privacy import PRIVATE_ONLY_FILES, is_private, redact_private

TRUNCATION_MARKER = "[...truncated, read file for full content...]"
REQUIRED_FILES = frozenset({"AGENTS.md"})
MISSING_REQUIRED = (
    "required: the workspace's operating instructions are missing; `memdir init` writes the "
    "template again"
)
HEAD_PERCENT = 70
TAIL_PERCENT = 20


class FileStatus(StrEnum):
    """How a bootstrap file entered the prompt."""

    OK = "OK"
    TRUNCATED = "TRUNCATED"
    MISSING = "MISSING"
    SKIPPED = "SKIPPED"
    DISABLED = "DISABLED"  # switched off in prompt.toml
    EXCLUDED = "EXCLUDED"  # private memory, left out of a group or shared session


@dataclass(frozen=True)
class InjectedFile:
    """One bootstrap file after budgeting: its status and the text to inject (if any).

    ``note`` says what a session kind changed (left out, private lines removed);
    ``enabled`` and ``sort_order`` are the file's prompt.toml settings as given.
    """

    name: str
    status: FileStatus
    raw_chars: int
    text: str | None
    note: str = ""
    enabled: bool = True
    sort_order: int | None = None

    @property
    def injected_chars(self) -> int:
        return 0 if self.text is None else len(self.text)


def truncate_text(text: str, budget: int) -> str:
    """Return ``text`` if it fits in ``budget`` chars, else its head and tail around the marker.

    The head is ``budget * 70 // 100`` characters, the tail ``budget * 20 // 100``.
    """
    if len(text) <= budget:
        return text
    head = budget * HEAD_PERCENT // 100
    tail = budget * TAIL_PERCENT // 100
    tail_text = text[len(text) - tail :] if tail else ""
    return f"{text[:head]}\n{TRUNCATION_MARKER}\n{tail_text}"


def plan_injection(
    files: Sequence[BootstrapSource], budget: PromptBudget, session_kind: str = "private"
) -> list[InjectedFile]:
    """Decide, in order, what of each file goes into the prompt.

    Trailing whitespace of a file is dropped before measuring it against the
    budget; ``raw_chars`` is the length of the file as given. A source with
    ``enabled`` False is DISABLED; in a group or shared session MEMORY.md is
    EXCLUDED and the parts of other files marked private are removed (``privacy``).
    Neither uses any room.
    """
    room = budget.total_chars
    planned: list[InjectedFile] = []
    for source in files:
        item = _plan_file(source, room, budget, session_kind)
        planned.append(item)
        room = max(0, room - item.injected_chars)
    return planned


def _plan_file(
    source: BootstrapSource, room: int, budget: PromptBudget, session_kind: str
) -> InjectedFile:
    name, content = source.name, source.content
    raw = 0 if content is None else len(content)
    settings = (bool(getattr(source, "enabled", True)), getattr(source, "sort_order", None))
    if not settings[0]:
        return InjectedFile(name, FileStatus.DISABLED, raw, None, "", *settings)
    if not is_private(session_kind) and name in PRIVATE_ONLY_FILES:
        note = f"private memory: left out of a {session_kind} session"
        return InjectedFile(name, FileStatus.EXCLUDED, raw, None, note, *settings)
    if content is None:
        note = MISSING_REQUIRED if name in REQUIRED_FILES else ""
        return InjectedFile(name, FileStatus.MISSING, 0, None, note, *settings)
    note = ""
    if not is_private(session_kind):
        content, removed = redact_private(content)
        if removed:
            note = f"{removed} private line(s) left out of a {session_kind} session"
    if room == 0 or room < budget.min_room_chars:
        return InjectedFile(name, FileStatus.SKIPPED, raw, None, note, *settings)
    trimmed = content.rstrip()
    limit = min(budget.per_file_chars, room)
    text = truncate_text(trimmed, limit)
    status = FileStatus.OK if len(trimmed) <= limit else FileStatus.TRUNCATED
    return InjectedFile(name, status, raw, text, note, *settings)
