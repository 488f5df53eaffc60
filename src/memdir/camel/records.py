"""The values the CAMEL-style API passes around: memory records and scored context records.

A ``MemoryRecord`` is one message an agent saw or said, with the metadata memory
needs to rank it later: a stable ``uuid``, when it happened, how important it is
(1 trivial to 10 critical), the task it belongs to and free-form ``extra`` data
(JSON-serialisable, so it survives a round trip through Markdown). A
``ContextRecord`` is a record a block returned together with the score the
block gave it (chat history: recency decay; vector store: the search score).
"""

from __future__ import annotations

import json
import math
import re
import uuid as uuidlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from memdir.errors import InvalidInputError
from memdir.llm import Message, Role

DEFAULT_IMPORTANCE = 5
RECORD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
TASK_ID_MAX_CHARS = 128


def new_record_id() -> str:
    """A fresh record id: 32 lower-case hex digits."""
    return uuidlib.uuid4().hex


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(when: object, what: str = "timestamp") -> datetime:
    """``when`` as an aware UTC datetime: a datetime (naive taken as UTC) or, as CAMEL's
    own records hold it, seconds since the epoch (``time.time()``)."""
    if isinstance(when, datetime):
        return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    if isinstance(when, int | float) and not isinstance(when, bool) and math.isfinite(when):
        try:
            return datetime.fromtimestamp(when, UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidInputError(
                f"{what} {when!r} is out of range; pass a datetime or seconds since the epoch"
            ) from exc
    raise InvalidInputError(
        f"{what} must be a datetime or seconds since the epoch (time.time()), got "
        f"{type(when).__name__} {when!r}"
    )


@dataclass(frozen=True)
class MemoryRecord:
    """One message kept in memory, with the metadata used to rank it.

    Build one from a :class:`~memdir.llm.Message` or from text with
    :meth:`create`. ``timestamp`` is stored in UTC (a naive value is taken as UTC;
    a number is seconds since the epoch, as CAMEL's records hold it).
    """

    message: Message
    uuid: str = field(default_factory=new_record_id)
    timestamp: datetime = field(default_factory=utc_now)
    importance: int = DEFAULT_IMPORTANCE
    task_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.message, Message):
            raise InvalidInputError(
                f"a memory record holds a Message, got {type(self.message).__name__}; "
                "use MemoryRecord.create(text, role=...) for plain text"
            )
        if not isinstance(self.uuid, str) or not RECORD_ID.fullmatch(self.uuid):
            raise InvalidInputError(
                f"record uuid {self.uuid!r} is not valid; use 1-128 letters, digits, '_' or '-'"
            )
        if isinstance(self.importance, bool) or not isinstance(self.importance, int):
            raise InvalidInputError(f"importance must be an integer 1-10, got {self.importance!r}")
        if not 1 <= self.importance <= 10:
            raise InvalidInputError(
                f"importance {self.importance!r} is out of range; use 1 (trivial) to 10 (critical)"
            )
        _check_task_id(self.task_id)
        object.__setattr__(self, "timestamp", as_utc(self.timestamp))
        object.__setattr__(self, "extra", MappingProxyType(_checked_extra(self.extra)))

    @classmethod
    def create(
        cls,
        content: Message | str,
        role: Role = "user",
        *,
        importance: int = DEFAULT_IMPORTANCE,
        task_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
        timestamp: datetime | float | None = None,
        uuid: str | None = None,
    ) -> MemoryRecord:
        """A record of ``content``: a message as is, or text spoken by ``role``.

        ``timestamp`` is a datetime or seconds since the epoch (``time.time()``)."""
        message = content if isinstance(content, Message) else Message(role, content)
        return cls(
            message=message,
            uuid=uuid or new_record_id(),
            timestamp=utc_now() if timestamp is None else as_utc(timestamp),
            importance=importance,
            task_id=task_id,
            extra=dict(extra or {}),
        )

    @property
    def role(self) -> Role:
        return self.message.role

    @property
    def content(self) -> str:
        return self.message.content

    def content_key(self) -> tuple[str, str]:
        """What makes two records say the same thing: role and whitespace-folded text."""
        return self.role, " ".join(self.content.split()).casefold()


@dataclass(frozen=True)
class ContextRecord:
    """A record a memory block returned, with the block's score for it.

    ``timestamp`` defaults to the record's own timestamp.
    """

    record: MemoryRecord
    score: float
    timestamp: datetime | None = None

    def __post_init__(self) -> None:
        if self.timestamp is None:
            object.__setattr__(self, "timestamp", self.record.timestamp)
        else:
            object.__setattr__(self, "timestamp", as_utc(self.timestamp))

    @property
    def when(self) -> datetime:
        """The timestamp, never None (for sorting)."""
        return self.timestamp or self.record.timestamp


def _check_task_id(task_id: str | None) -> None:
    if task_id is None:
        return
    if not isinstance(task_id, str) or not task_id.strip() or len(task_id) > TASK_ID_MAX_CHARS:
        raise InvalidInputError(
            f"task id {task_id!r} is not valid; use 1-{TASK_ID_MAX_CHARS} characters or None"
        )
    if "\n" in task_id or "\r" in task_id:
        raise InvalidInputError(f"task id {task_id!r} spans lines; use a single-line id")


def _checked_extra(extra: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(extra, Mapping):
        raise InvalidInputError(f"extra must be a mapping, got {type(extra).__name__}")
    plain = dict(extra)
    try:
        json.dumps(plain, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"extra {plain!r} is not JSON-serialisable ({exc}); keep it to strings, numbers, "
            "booleans, lists and objects"
        ) from exc
    return plain
