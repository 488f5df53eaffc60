"""Conversation transcripts: one JSONL file per agent and session.

``<home>/sessions/<agent_id or "global">/<session_id>.jsonl`` holds one JSON
object a line, oldest first::

    {"type": "message", "id": "...", "timestamp": "...", "role": "user", "content": "...",
     "tool_calls": [{"id": "...", "name": "...", "arguments": {...}}],
     "tool_call_id": null, "name": null}
    {"type": "message", ..., "extra": {...}}     (optional: the message as a framework
                                                  holds it, kept verbatim)
    {"type": "compaction", "id": "...", "timestamp": "...", "summary": "...",
     "replaced_ids": ["...", ...], "method": "model", "tokens_before": 0, "tokens_after": 0,
     "flushed_count": 0}

Appends hold an exclusive ``fcntl.flock`` on the file, so concurrent writers
(threads or processes) never interleave a line. Loading skips, with a warning, a
torn last line (a writer died mid-line) or any other unreadable line, and keeps
every other line. Compactions are recorded, not applied: the file stays a full
audit trail and ``Transcript.current()`` replays them. POSIX only (fcntl).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memdir.context.compaction import Compaction
from memdir.errors import InvalidInputError, NotFoundError
from memdir.home import Home
from memdir.llm.base import Message, ToolCall

logger = logging.getLogger(__name__)

SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
SUFFIX = ".jsonl"

Clock = Callable[[], datetime]


def validate_session_id(session_id: str) -> str:
    """``session_id`` if it is 1-128 of ``[A-Za-z0-9_-]`` starting alphanumeric, else an error."""
    if not isinstance(session_id, str) or not SESSION_ID_PATTERN.fullmatch(session_id):
        raise InvalidInputError(
            f"session id {session_id!r} is not valid; use 1-128 letters, digits, '_' or '-', "
            "starting with a letter or digit (no '/', '.' or spaces)"
        )
    return session_id


def new_session_id(now: datetime | None = None) -> str:
    """A fresh, sortable session id such as ``20250102T030405-1a2b3c4d``."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def sessions_dir(home: Path, agent_id: str | None = None) -> Path:
    """``<home>/sessions/<agent_id or "global">``."""
    return Home(Path(home)).sessions_dir(agent_id)


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class SessionMessage:
    """A message as stored: its id and when it was appended.

    ``extra`` is an optional JSON object stored with it verbatim: the message in the form a
    framework keeps it (``memdir.integrations.openai_agents`` keeps the SDK's items there).
    """

    id: str
    timestamp: datetime
    message: Message
    extra: dict[str, Any] | None = None


@dataclass(frozen=True)
class CompactionRecord:
    """A compaction as stored: the summary message it inserted and the ids it replaced."""

    id: str
    timestamp: datetime
    summary: str
    replaced_ids: tuple[str, ...]
    method: str = "model"
    tokens_before: int = 0
    tokens_after: int = 0
    flushed_count: int = 0


Entry = SessionMessage | CompactionRecord


@dataclass(frozen=True)
class Transcript:
    """Everything a session file holds, in order, and how many lines were unreadable."""

    session_id: str
    agent_id: str | None
    entries: tuple[Entry, ...]
    skipped_lines: int = 0

    @property
    def messages(self) -> tuple[SessionMessage, ...]:
        """Every message ever appended, compacted or not (the audit trail)."""
        return tuple(e for e in self.entries if isinstance(e, SessionMessage))

    @property
    def compactions(self) -> tuple[CompactionRecord, ...]:
        return tuple(e for e in self.entries if isinstance(e, CompactionRecord))

    def current(self) -> list[SessionMessage]:
        """The conversation as the model last saw it: compactions replayed.

        Each compaction removes the messages it replaced and puts its summary (a
        user message whose id is the compaction's id) where the first one was.
        """
        active: list[SessionMessage] = []
        for entry in self.entries:
            if isinstance(entry, SessionMessage):
                active.append(entry)
                continue
            replaced = set(entry.replaced_ids)
            positions = [i for i, m in enumerate(active) if m.id in replaced]
            at = positions[0] if positions else 0
            active = [m for m in active if m.id not in replaced]
            if entry.summary:
                summary = Message("user", entry.summary)
                active.insert(at, SessionMessage(entry.id, entry.timestamp, summary))
        return active


class Session:
    """One transcript file. The constructor validates ids and touches no file."""

    def __init__(
        self,
        home: Path,
        session_id: str,
        *,
        agent_id: str | None = None,
        clock: Clock = _utc_now,
    ) -> None:
        self.session_id = validate_session_id(session_id)
        self.agent_id = agent_id
        self.path = sessions_dir(home, agent_id) / f"{session_id}{SUFFIX}"
        self._clock = clock

    def __repr__(self) -> str:
        return f"Session({self.session_id!r}, agent_id={self.agent_id!r})"

    @property
    def exists(self) -> bool:
        return self.path.is_file()

    def append(self, message: Message, *, message_id: str | None = None) -> SessionMessage:
        """Append one message under the file lock and return it with its id and time."""
        return self.extend([message], message_ids=None if message_id is None else [message_id])[0]

    def extend(
        self,
        messages: Iterable[Message],
        *,
        message_ids: Sequence[str] | None = None,
        extras: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[SessionMessage]:
        """Append several messages in one locked write (all land together, in order);
        ``extras``, one per message, are stored with them (``SessionMessage.extra``)."""
        batch = list(messages)
        ids = list(message_ids) if message_ids is not None else [_new_id() for _ in batch]
        kept = list(extras) if extras is not None else [None] * len(batch)
        if len(ids) != len(batch):
            raise InvalidInputError(
                f"got {len(ids)} message ids for {len(batch)} messages; pass one id per message"
            )
        if len(kept) != len(batch):
            raise InvalidInputError(
                f"got {len(kept)} extras for {len(batch)} messages; pass one per message"
            )
        now = self._clock()
        stored = [SessionMessage(i, now, m, e) for i, m, e in zip(ids, batch, kept, strict=True)]
        self._write([_message_record(s) for s in stored])
        return stored

    def record_compaction(
        self,
        *,
        summary: str,
        replaced_ids: Sequence[str],
        method: str = "model",
        tokens_before: int = 0,
        tokens_after: int = 0,
        flushed_count: int = 0,
    ) -> CompactionRecord:
        """Append a compaction line: the summary message content and the ids it replaced."""
        record = CompactionRecord(
            id=_new_id(),
            timestamp=self._clock(),
            summary=summary,
            replaced_ids=tuple(replaced_ids),
            method=method,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            flushed_count=flushed_count,
        )
        self._write([_compaction_record(record)])
        return record

    def load(self) -> Transcript:
        """Read the transcript; unreadable lines are logged and skipped, never fatal."""
        try:
            with self.path.open("rb") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
                try:
                    data = handle.read()
                finally:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        except FileNotFoundError:
            raise NotFoundError(
                f"session {self.session_id!r} has no transcript at {self.path}; "
                "list sessions to find its id, or append a message to start it"
            ) from None
        entries, skipped = _parse_lines(data, self.path)
        return Transcript(self.session_id, self.agent_id, tuple(entries), skipped)

    def _write(self, records: Sequence[dict[str, Any]]) -> None:
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        data = lines.encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data  # a writer died mid-line: start on a fresh line
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def record_compaction(
    session: Session, compaction: Compaction, ids: Sequence[str | None]
) -> list[str | None]:
    """Record ``compaction`` in ``session``; return the ids parallel to its new messages.

    ``ids`` runs parallel to the messages the compaction was given (None for a
    message that is not in the transcript, such as the system prompt). The
    summary message takes the compaction record's id.
    """
    if len(ids) != len(compaction.kept_indices) + len(compaction.summarised_indices) + len(
        compaction.dropped_indices
    ):
        raise InvalidInputError(
            f"got {len(ids)} ids for a compaction of a different list; pass one id per "
            "message the compaction was given"
        )
    if not compaction.changed:
        return list(ids)
    replaced = [
        ids[i]
        for i in (*compaction.summarised_indices, *compaction.dropped_indices)
        if ids[i] is not None
    ]
    record = session.record_compaction(
        summary=compaction.messages[compaction.summary_index].content
        if compaction.summary_index is not None
        else "",
        replaced_ids=[i for i in replaced if i is not None],
        method=compaction.method,
        tokens_before=compaction.tokens_before,
        tokens_after=compaction.tokens_after,
        flushed_count=compaction.flushed_count,
    )
    new_ids: list[str | None] = [ids[i] for i in compaction.kept_indices]
    if compaction.summary_index is not None:
        new_ids.insert(compaction.summary_index, record.id)
    return new_ids


@dataclass(frozen=True)
class SessionInfo:
    """A transcript on disk."""

    session_id: str
    agent_id: str | None
    path: Path
    size_bytes: int
    modified: datetime


def list_sessions(home: Path, agent_id: str | None = None) -> list[SessionInfo]:
    """The sessions of ``agent_id`` (None: the global ones), most recently modified first."""
    directory = sessions_dir(home, agent_id)
    if not directory.is_dir():
        return []
    found = []
    for path in directory.glob(f"*{SUFFIX}"):
        name = path.name[: -len(SUFFIX)]
        if not SESSION_ID_PATTERN.fullmatch(name) or not path.is_file():
            continue
        stat = path.stat()
        modified = datetime.fromtimestamp(stat.st_mtime, UTC)
        found.append(SessionInfo(name, agent_id, path, stat.st_size, modified))
    return sorted(found, key=lambda info: (info.modified, info.session_id), reverse=True)


def _new_id() -> str:
    return uuid.uuid4().hex


def _message_record(stored: SessionMessage) -> dict[str, Any]:
    message = stored.message
    extra = {} if stored.extra is None else {"extra": stored.extra}
    return {
        "type": "message",
        "id": stored.id,
        "timestamp": stored.timestamp.isoformat(),
        "role": message.role,
        "content": message.content,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ],
        "tool_call_id": message.tool_call_id,
        "name": message.name,
        **extra,
    }


def _compaction_record(record: CompactionRecord) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": record.id,
        "timestamp": record.timestamp.isoformat(),
        "summary": record.summary,
        "replaced_ids": list(record.replaced_ids),
        "method": record.method,
        "tokens_before": record.tokens_before,
        "tokens_after": record.tokens_after,
        "flushed_count": record.flushed_count,
    }


def _parse_lines(data: bytes, path: Path) -> tuple[list[Entry], int]:
    lines = data.split(b"\n")
    entries: list[Entry] = []
    skipped = 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            entries.append(_parse_entry(json.loads(raw)))
        except (ValueError, KeyError, TypeError, InvalidInputError) as exc:
            skipped += 1
            torn = number == len(lines) and not data.endswith(b"\n")
            what = "torn last line" if torn else "unreadable line"
            logger.warning("skipping %s %d of %s: %s", what, number, path, exc)
    return entries, skipped


def _parse_entry(record: Any) -> Entry:
    if not isinstance(record, dict):
        raise TypeError(f"expected a JSON object, got {type(record).__name__}")
    timestamp = datetime.fromisoformat(record["timestamp"])
    if record["type"] == "compaction":
        return CompactionRecord(
            id=str(record["id"]),
            timestamp=timestamp,
            summary=str(record["summary"]),
            replaced_ids=tuple(str(i) for i in record["replaced_ids"]),
            method=str(record.get("method", "model")),
            tokens_before=int(record.get("tokens_before", 0)),
            tokens_after=int(record.get("tokens_after", 0)),
            flushed_count=int(record.get("flushed_count", 0)),
        )
    if record["type"] != "message":
        raise ValueError(f"unknown entry type {record['type']!r}")
    calls = tuple(
        ToolCall(str(c["id"]), str(c["name"]), dict(c.get("arguments") or {}))
        for c in record.get("tool_calls") or ()
    )
    message = Message(
        record["role"],
        record["content"],
        tool_calls=calls,
        tool_call_id=record.get("tool_call_id"),
        name=record.get("name"),
    )
    extra = record.get("extra")
    return SessionMessage(
        str(record["id"]), timestamp, message, extra if isinstance(extra, dict) else None
    )
