"""The values a system prompt is built from.

The prompt layer reads nothing itself: ``memdir.memory`` loads the bootstrap files,
counts the daily notes, picks the facts and passes them in ``PromptInputs``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from memdir.errors import InvalidInputError
from memdir.prompt.privacy import check_session_kind


class BootstrapSource(Protocol):
    """Anything with a file name and its text (None when the file is missing).

    ``memdir.workspace.BootstrapFile`` fits, as does ``BootstrapEntry``.
    """

    @property
    def name(self) -> str: ...

    @property
    def content(self) -> str | None: ...


@dataclass(frozen=True)
class BootstrapEntry:
    """A file for the prompt: name and text (None when missing), and its prompt.toml
    settings (a disabled file is reported, never injected)."""

    name: str
    content: str | None
    enabled: bool = True
    sort_order: int | None = None


@dataclass(frozen=True)
class PromptBudget:
    """Character budgets for the bootstrap files of the system prompt.

    Each file gets at most ``min(per_file_chars, room left of total_chars)``; once
    less than ``min_room_chars`` of room is left, no further file is injected.
    """

    per_file_chars: int = 20_000
    total_chars: int = 150_000
    min_room_chars: int = 64

    def __post_init__(self) -> None:
        for label in ("per_file_chars", "total_chars", "min_room_chars"):
            value = getattr(self, label)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInputError(
                    f"prompt budget {label} must be a whole number of 0 or more, got {value!r}"
                )
        if self.per_file_chars == 0 or self.total_chars == 0:
            raise InvalidInputError(
                "prompt budgets per_file_chars and total_chars must be above 0; "
                f"got {self.per_file_chars} and {self.total_chars}"
            )


@dataclass(frozen=True)
class PromptInputs:
    """Everything ``build_system_prompt`` needs, already loaded.

    ``bootstrap_files`` come in prompt order (by default AGENTS, SOUL, IDENTITY,
    USER, TOOLS, MEMORY; BOOTSTRAP.md first while the first-run ritual lasts); a
    source with an ``enabled`` attribute of False is reported but not injected.
    ``now`` must be timezone-aware; ``runtime`` holds metadata such as agent id,
    home, model, os, python and memdir version; ``facts`` and ``skills`` are one
    line each. ``session_kind`` (private, group, shared) decides what private
    memory is left out (``privacy``); ``recent_notes`` are the newest daily notes,
    newest first, fitted into ``recent_notes_chars``; ``workspace`` is the
    workspace's path, for the report.
    """

    base_prompt: str
    bootstrap_files: Sequence[BootstrapSource]
    now: dt.datetime
    timezone: str
    runtime: Mapping[str, object] = field(default_factory=dict)
    tool_names: Sequence[str] = ()
    daily_note_count: int = 0
    memory_dir: str = "memory"
    learnings: str = ""
    facts: Sequence[str] = ()
    skills: Sequence[str] = ()
    skills_chars: int = 4_000
    budget: PromptBudget = field(default_factory=PromptBudget)
    session_kind: str = "private"
    recent_notes: Sequence[BootstrapSource] = ()
    recent_notes_chars: int = 4_000
    workspace: str = ""

    def __post_init__(self) -> None:
        check_session_kind(self.session_kind)
        if isinstance(self.recent_notes_chars, bool) or self.recent_notes_chars < 0:
            raise InvalidInputError(
                f"recent_notes_chars must be 0 or more, got {self.recent_notes_chars!r}"
            )
        if self.now.tzinfo is None or self.now.utcoffset() is None:
            raise InvalidInputError(
                f"now {self.now.isoformat()!r} has no timezone; pass an aware datetime "
                "such as datetime.now(ZoneInfo('Europe/Berlin'))"
            )
        if isinstance(self.daily_note_count, bool) or self.daily_note_count < 0:
            raise InvalidInputError(
                f"daily_note_count must be 0 or more, got {self.daily_note_count!r}"
            )
        # Freeze the sequences so the inputs cannot change after construction.
        object.__setattr__(self, "bootstrap_files", tuple(self.bootstrap_files))
        object.__setattr__(self, "tool_names", tuple(self.tool_names))
        object.__setattr__(self, "facts", tuple(self.facts))
        object.__setattr__(self, "skills", tuple(self.skills))
        object.__setattr__(self, "recent_notes", tuple(self.recent_notes))
        object.__setattr__(self, "runtime", dict(self.runtime))
