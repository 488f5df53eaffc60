"""Fitting bootstrap files into the prompt budget.

Files are taken in order. Each gets ``min(per_file_chars, room)`` characters,
where room is what is left of ``total_chars``. A file over its budget keeps the
first 70% and the last 20% of the budget around ``TRUNCATION_MARKER`` (joined
by newlines). Once less than ``min_room_chars`` of room is left (or none at
all), later files are not injected (status SKIPPED). Missing files use no room.

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

TRUNCATION_MARKER = "[...truncated, read file for full content...]"
HEAD_PERCENT = 70
TAIL_PERCENT = 20


class FileStatus(StrEnum):
    """How a bootstrap file entered the prompt."""

    OK = "OK"
    TRUNCATED = "TRUNCATED"
    MISSING = "MISSING"
    SKIPPED = "SKIPPED"


@dataclass(frozen=True)
class InjectedFile:
    """One bootstrap file after budgeting: its status and the text to inject (if any)."""

    name: str
    status: FileStatus
    raw_chars: int
    text: str | None

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


def plan_injection(files: Sequence[BootstrapSource], budget: PromptBudget) -> list[InjectedFile]:
    """Decide, in order, what of each file goes into the prompt.

    Trailing whitespace of a file is dropped before measuring it against the
    budget; ``raw_chars`` is the length of the file as given.
    """
    room = budget.total_chars
    planned: list[InjectedFile] = []
    for source in files:
        content = source.content
        if content is None:
            planned.append(InjectedFile(source.name, FileStatus.MISSING, 0, None))
            continue
        if room == 0 or room < budget.min_room_chars:
            planned.append(InjectedFile(source.name, FileStatus.SKIPPED, len(content), None))
            continue
        trimmed = content.rstrip()
        limit = min(budget.per_file_chars, room)
        text = truncate_text(trimmed, limit)
        status = FileStatus.OK if len(trimmed) <= limit else FileStatus.TRUNCATED
        planned.append(InjectedFile(source.name, status, len(content), text))
        room = max(0, room - len(text))
    return planned
