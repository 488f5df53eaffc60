"""``ChatHistoryBlock``: the recent conversation, bounded, kept in a memdir session transcript.

The block holds at most ``max_records`` records. When it overflows it evicts by
importance, not age alone: the record with the lowest ``(importance, timestamp)``
goes first, system records are never evicted and neither are the newest
``keep_recent`` records (default: 4, or fewer when ``max_records`` is smaller).
``retrieve(window_size)`` scores records like CAMEL does: the newest gets 1.0 and
each older one ``keep_rate`` times the next.

Attached to a ``Memory`` and a session id, the block persists to the session's
JSONL transcript (``sessions/<agent>/<session_id>.jsonl``): records are appended
as messages whose ids are the record uuids, and evictions or a ``clear()`` are
recorded as compactions that replace the dropped ids (nothing is erased; the
transcript stays an audit trail). The record metadata the transcript format has
no room for (importance, task id, extra, original timestamp) goes to a sidecar
``<session_id>.camel.json`` next to it, rewritten atomically. Without the
sidecar a loaded record gets importance 5 and the transcript's timestamp.
One block should write a session at a time.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from memdir.camel.records import DEFAULT_IMPORTANCE, ContextRecord, MemoryRecord
from memdir.errors import InvalidInputError
from memdir.llm import Message
from memdir.memory import Memory

logger = logging.getLogger(__name__)

SIDECAR_SUFFIX = ".camel.json"
SIDECAR_FORMAT = "memdir-camel-records"
EVICT_METHOD = "camel-evict"
DEFAULT_KEEP_RECENT = 4


class ChatHistoryBlock:
    """Recent records with importance-aware eviction; optionally persisted to a session."""

    def __init__(
        self,
        memory: Memory | None = None,
        session_id: str | None = None,
        *,
        max_records: int = 200,
        keep_recent: int | None = None,
        keep_rate: float = 0.9,
        autosave: bool = True,
    ) -> None:
        if max_records < 1:
            raise InvalidInputError(f"max_records must be at least 1, got {max_records!r}")
        if keep_recent is None:
            keep_recent = min(DEFAULT_KEEP_RECENT, max_records - 1)
        if not 0 <= keep_recent < max_records:
            raise InvalidInputError(
                f"keep_recent ({keep_recent!r}) must be >= 0 and below max_records "
                f"({max_records}); lower keep_recent or raise max_records"
            )
        if not 0.0 < keep_rate <= 1.0:
            raise InvalidInputError(f"keep_rate must be in (0, 1], got {keep_rate!r}")
        if session_id is not None and memory is None:
            raise InvalidInputError(
                f"session {session_id!r} needs a Memory to live in; pass memory=Memory.open(...)"
            )
        if memory is not None and session_id is not None:
            memory.session(session_id)  # validates the id; touches no file
        self.memory = memory
        self.session_id = session_id
        self.max_records = max_records
        self.keep_recent = keep_recent
        self.keep_rate = keep_rate
        self.autosave = autosave
        self._records: list[MemoryRecord] = []
        self._stored: list[str] | None = None  # ids the transcript currently shows; None: unread

    @classmethod
    def open(cls, memory: Memory, session_id: str, **options: Any) -> ChatHistoryBlock:
        """A block on ``session_id``, loaded from its transcript when one exists."""
        block = cls(memory, session_id, **options)
        if memory.session(session_id).exists:
            block.load()
        return block

    @property
    def records(self) -> tuple[MemoryRecord, ...]:
        """The records held, oldest first."""
        return tuple(self._records)

    def __len__(self) -> int:
        return len(self._records)

    # -- writing and evicting ----------------------------------------------------------
    def write_records(self, records: Iterable[MemoryRecord]) -> list[MemoryRecord]:
        """Add records (a uuid already held is skipped); returns the records evicted."""
        held = {r.uuid for r in self._records}
        for record in records:
            if not isinstance(record, MemoryRecord):
                raise InvalidInputError(
                    f"write_records takes MemoryRecord values, got {type(record).__name__}"
                )
            if record.uuid in held:
                logger.debug("record %s is already in the chat history; skipped", record.uuid)
                continue
            held.add(record.uuid)
            self._records.append(record)
        evicted = self._evict()
        if self.autosave and self.session_id is not None:
            self.save()
        return evicted

    def write_record(self, record: MemoryRecord) -> list[MemoryRecord]:
        return self.write_records([record])

    def _evict(self) -> list[MemoryRecord]:
        evicted: list[MemoryRecord] = []
        while len(self._records) > self.max_records:
            victim = self._pick_victim()
            if victim is None:
                logger.warning(
                    "chat history holds %d records over its limit of %d, all protected "
                    "(system or newest %d); keeping them",
                    len(self._records), self.max_records, self.keep_recent,
                )  # fmt: skip
                break
            evicted.append(self._records.pop(victim))
        return evicted

    def _pick_victim(self) -> int | None:
        """Index of the lowest (importance, timestamp) record that may be evicted."""
        protected_from = len(self._records) - self.keep_recent
        candidates = [i for i, r in enumerate(self._records[:protected_from]) if r.role != "system"]
        if not candidates:
            return None
        return min(
            candidates, key=lambda i: (self._records[i].importance, self._records[i].timestamp, i)
        )

    # -- reading -------------------------------------------------------------------------
    def retrieve(self, window_size: int | None = None) -> list[ContextRecord]:
        """System records, then the last ``window_size`` others (all when None), oldest first.

        The newest record scores 1.0, each older one ``keep_rate`` times the next;
        system records score 1.0.
        """
        if window_size is not None and window_size < 0:
            raise InvalidInputError(f"window_size must be >= 0 or None, got {window_size!r}")
        system = [r for r in self._records if r.role == "system"]
        others = [r for r in self._records if r.role != "system"]
        if window_size is not None:
            others = others[len(others) - window_size :] if window_size else []
        newest = len(others) - 1
        return [
            *(ContextRecord(r, 1.0) for r in system),
            *(ContextRecord(r, self.keep_rate ** (newest - i)) for i, r in enumerate(others)),
        ]

    def clear(self) -> None:
        """Forget every record (a persisted session records the removal as a compaction)."""
        self._records = []
        if self.session_id is not None and self.memory is not None:
            self.save()

    # -- persistence ---------------------------------------------------------------------
    def _memory_for(self, session_id: str | None, action: str) -> tuple[Memory, str]:
        if self.memory is None:
            raise InvalidInputError(
                f"this chat history has no memory to {action}; create it with "
                "ChatHistoryBlock(memory, session_id)"
            )
        target = session_id or self.session_id
        if target is None:
            raise InvalidInputError(
                f"no session to {action}; pass a session id or create the block with one"
            )
        if target != self.session_id:
            self.memory.session(target)  # validate before switching
            self.session_id = target
            self._stored = None
        return self.memory, target

    def save(self, session_id: str | None = None) -> int:
        """Bring the transcript of ``session_id`` (default: the block's) in line with the block.

        Appends the records it lacks, records a compaction for the ones it shows
        but the block no longer holds, and rewrites the metadata sidecar. Passing
        another session id switches the block to it. Returns how many records
        were appended.
        """
        memory, target = self._memory_for(session_id, "save to")
        session = memory.session(target)
        stored = self._stored if self._stored is not None else _current_ids(memory, target)
        held = {r.uuid for r in self._records}
        stale = [i for i in stored if i not in held]
        if stale:
            session.record_compaction(summary="", replaced_ids=stale, method=EVICT_METHOD)
        known = set(stored)
        new = [r for r in self._records if r.uuid not in known]
        if new:
            session.extend([r.message for r in new], message_ids=[r.uuid for r in new])
        self._stored = [i for i in stored if i in held] + [r.uuid for r in new]
        write_sidecar(sidecar_path(session.path), self._records)
        return len(new)

    def load(self, session_id: str | None = None) -> int:
        """Replace the block's records with the session's current messages; returns the count.

        Raises ``NotFoundError`` when the session has no transcript.
        """
        memory, target = self._memory_for(session_id, "load from")
        session = memory.session(target)
        current = session.load().current()
        metadata = read_sidecar(sidecar_path(session.path))
        self._records = [
            _restore(m.id, m.timestamp, m.message, metadata.get(m.id, {})) for m in current
        ]
        self._stored = [m.id for m in current]
        if self._evict() and self.autosave:
            self.save()
        return len(self._records)


def _current_ids(memory: Memory, session_id: str) -> list[str]:
    session = memory.session(session_id)
    if not session.exists:
        return []
    return [m.id for m in session.load().current()]


def _restore(
    record_id: str, stored_at: datetime, message: Message, meta: dict[str, Any]
) -> MemoryRecord:
    """A record from a transcript message and its sidecar metadata (bad metadata: defaults)."""
    extra = meta.get("extra")
    try:
        return MemoryRecord(
            message=message,
            uuid=record_id,
            timestamp=datetime.fromisoformat(str(meta.get("timestamp") or stored_at.isoformat())),
            importance=meta.get("importance", DEFAULT_IMPORTANCE),
            task_id=meta.get("task_id"),
            extra=extra if isinstance(extra, dict) else {},
        )
    except (InvalidInputError, ValueError) as exc:
        logger.warning(
            "record %s has bad metadata in its sidecar (%s); using defaults", record_id, exc
        )
        return MemoryRecord(message=message, uuid=record_id, timestamp=stored_at)


# -- the metadata sidecar -------------------------------------------------------------------


def sidecar_path(transcript: Path) -> Path:
    """``<session_id>.camel.json`` beside ``<session_id>.jsonl``."""
    return transcript.with_name(transcript.name.removesuffix(".jsonl") + SIDECAR_SUFFIX)


def write_sidecar(path: Path, records: Iterable[MemoryRecord]) -> None:
    """Write the metadata of ``records`` atomically (temp file, fsync, rename)."""
    document = {
        "format": SIDECAR_FORMAT,
        "version": 1,
        "records": {
            r.uuid: {
                "importance": r.importance,
                "task_id": r.task_id,
                "extra": dict(r.extra),
                "timestamp": r.timestamp.isoformat(),
            }
            for r in records
        },
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, ensure_ascii=False, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def read_sidecar(path: Path) -> dict[str, dict[str, Any]]:
    """The metadata by record id; an absent or unreadable sidecar gives ``{}`` (logged)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("ignoring the unreadable record metadata %s: %s", path, exc)
        return {}
    records = document.get("records") if isinstance(document, dict) else None
    if not isinstance(records, dict):
        logger.warning("ignoring the record metadata %s: no 'records' object", path)
        return {}
    return {str(k): v for k, v in records.items() if isinstance(v, dict)}
