"""The tools' argument models: pydantic models whose JSON schemas are the tools' input
schemas. Validation of a tool's own arguments stays here, so its messages name the
arguments (``max_results``, ``as_of``) as the agent sent them."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from memdir.facts import MAX_FACT_CHARS
from memdir.facts.safety import MAX_REASON_CHARS
from memdir.tools.host import Scope

MAX_CONTENT_CHARS = 2_000_000
ISO_MOMENT = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?(?:Z|[+-]\d{2}:?\d{2})?"
)
_PATH = Field(
    min_length=1,
    max_length=512,
    description="Workspace-relative Markdown path such as 'MEMORY.md' or 'memory/2024-05-01.md'.",
)
_CATEGORY = Field(
    default=None,
    pattern=r"^[a-z][a-z0-9_-]{0,31}$",
    description="preference, decision, fact, context, or another short lower-case word.",
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class MemorySearchArgs(_Args):
    query: str = Field(min_length=1, max_length=2000, description="What to look for.")
    max_results: int = Field(
        6,
        ge=1,
        le=50,
        validation_alias=AliasChoices("max_results", "maxResults"),
        description="How many hits to return.",
    )
    min_score: float | None = Field(
        None,
        ge=0.0,
        le=2.0,
        validation_alias=AliasChoices("min_score", "minScore"),
        description="Drop hits scoring below this confidence (default: configured, 0.1); "
        "0 shows weak matches too.",
    )
    include_history: bool = Field(
        False,
        description="Also return lines of facts that were superseded or forgotten (and the "
        "records of forgets), after the current hits and marked as retired.",
    )
    scope: Scope = Field(
        "agent",
        description="agent: your workspace and the global one; global: only the global "
        "workspace; all: every agent (if the server allows it; their newest notes are "
        "indexed first).",
    )


class MemoryGetArgs(_Args):
    path: str = Field(
        min_length=1,
        max_length=600,
        validation_alias=AliasChoices("path", "filePath"),
        description="A path as memory_search cites it, e.g. 'memory/2024-05-01.md', or "
        "'global:memory/2024-05-01.md' for a file of the global workspace.",
    )
    from_line: int | None = Field(
        None,
        ge=1,
        validation_alias=AliasChoices("from_line", "from"),
        description="First line to read (1-based).",
    )
    lines: int | None = Field(None, ge=1, le=10_000, description="How many lines to read.")


class MemorySaveArgs(_Args):
    content: str = Field(
        min_length=1, max_length=MAX_FACT_CHARS, description="One short, self-contained statement."
    )
    category: str | None = _CATEGORY
    importance: int | None = Field(
        None,
        ge=1,
        le=10,
        strict=True,  # true/false or "7" are refused, not coerced
        description="1 (trivial) to 10 (critical); default: estimated.",
    )


AsOf = Annotated[
    datetime | None,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "format": "date-time"},
                {"type": "string", "format": "date"},
                {"type": "null"},
            ]
        }
    ),
]
"""A moment as ISO 8601: a datetime, or a date (meaning the end of that day)."""


def iso_moment(value: object) -> object:
    """Check an ``as_of`` value: an ISO 8601 date or datetime string, never a number.

    A bare date means the end of that day. Numbers (``0.5``, ``1700000000``) are
    refused rather than read as Unix timestamps.
    """
    if value is None or isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not ISO_MOMENT.fullmatch(value.strip()):
        raise ValueError(
            f"{value!r} is not an ISO 8601 date or datetime; pass e.g. 2026-01-31 or "
            "2026-01-31T09:00:00Z"
        )
    value = value.strip()
    return f"{value}T23:59:59" if len(value) == 10 else value


class MemoryRecallArgs(_Args):
    query: str = Field(min_length=1, max_length=2000, description="What you want to know.")
    category: str | None = _CATEGORY
    as_of: AsOf = Field(
        None, description="ISO 8601 date or datetime: recall what was true at that moment."
    )
    limit: int = Field(5, ge=1, le=50, description="How many facts to return.")

    _date_only = field_validator("as_of", mode="before")(iso_moment)


class MemoryListFactsArgs(_Args):
    category: str | None = _CATEGORY
    as_of: AsOf = Field(
        None, description="ISO 8601 date or datetime: the facts that were valid at that moment."
    )
    include_history: bool = Field(
        False, description="Also list superseded and forgotten facts, marked as such."
    )
    limit: int = Field(50, ge=1, le=500, description="At most this many facts, newest first.")

    _date_only = field_validator("as_of", mode="before")(iso_moment)


class MemoryRecentArgs(_Args):
    days: float = Field(
        7, gt=0, le=3650, description="How far back to look, in days (fractions allowed)."
    )
    limit: int = Field(20, ge=1, le=200, description="At most this many files and facts each.")


class MemoryForgetArgs(_Args):
    fact_id: str | None = Field(
        None, min_length=1, max_length=128, description="Id of the fact (from memory_recall)."
    )
    query: str | None = Field(
        None, min_length=1, max_length=2000, description="Text matching the fact to retire."
    )
    reason: str = Field(
        min_length=1, max_length=MAX_REASON_CHARS, description="Why the fact is retired."
    )

    @model_validator(mode="after")
    def _one_target(self) -> MemoryForgetArgs:
        if (self.fact_id is None) == (self.query is None):
            raise ValueError("pass exactly one of fact_id or query")
        return self


class MemoryListFilesArgs(_Args):
    prefix: str = Field(
        "", max_length=512, description="Only paths starting with this, e.g. 'memory/'."
    )


class MemoryReadFileArgs(_Args):
    path: str = _PATH


_EXPECTED_SHA256 = Field(
    None,
    min_length=64,
    max_length=64,
    description="The sha256 memory_read_file returned: the change applies only if the file "
    "still holds that text (if it changed, nothing is written: read it again).",
)


class MemoryWriteFileArgs(_Args):
    path: str = _PATH
    content: str = Field(max_length=MAX_CONTENT_CHARS, description="The whole new file content.")
    expected_sha256: str | None = _EXPECTED_SHA256
    create_only: bool = Field(
        False, description="Only create a new file; fail (nothing written) if it exists."
    )


class MemoryEditFileArgs(_Args):
    path: str = _PATH
    old_text: str = Field(
        min_length=1, max_length=MAX_CONTENT_CHARS, description="Exact text to replace."
    )
    new_text: str = Field(max_length=MAX_CONTENT_CHARS, description="Replacement text.")
    replace_all: bool = Field(False, description="Replace every occurrence, not just one.")
    expected_sha256: str | None = _EXPECTED_SHA256


class MemoryFinishRitualArgs(_Args):
    pass


class MemoryContextArgs(_Args):
    session_kind: Literal["private", "group", "shared"] | None = Field(
        None,
        description="private (you and your human), group or shared; default: configured.",
    )


class MemorySetPromptFileArgs(_Args):
    path: str = Field(
        min_length=1,
        max_length=512,
        description="Workspace-relative Markdown path such as 'TOOLS.md' or 'notes/style.md'.",
    )
    enabled: bool | None = Field(None, description="true: inject it; false: leave it out.")
    sort_order: int | None = Field(
        None, ge=-10_000, le=10_000, description="Position: lower goes first (AGENTS.md is 10)."
    )

    @model_validator(mode="after")
    def _something_to_set(self) -> MemorySetPromptFileArgs:
        if self.enabled is None and self.sort_order is None:
            raise ValueError("pass enabled and/or sort_order")
        return self
