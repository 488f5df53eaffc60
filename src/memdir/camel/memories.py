"""Agent memories: blocks plus a context creator, behind one small interface.

* ``ChatHistoryMemory``: the recent conversation (a ``ChatHistoryBlock``).
* ``VectorDBMemory``: long-term records found by the current topic (a ``VectorDBBlock``);
  the topic is the last user message written, or the query passed to ``retrieve``.
* ``LongtermAgentMemory``: both. The chat history comes first; records from the
  vector store are added when they are not already there (same uuid, or the
  same role and text), their scores rescaled so the best hit scores 1.0 like
  the newest chat message; the result is ranked by score and the context
  creator packs it. System records are not written to the vector store.

Every memory has ``write_records``, ``write_record``, ``retrieve``,
``get_context() -> (messages, token_count)`` and ``clear``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from memdir.camel.context import ContextCreator, dedupe_by_uuid
from memdir.camel.history import ChatHistoryBlock
from memdir.camel.records import ContextRecord, MemoryRecord
from memdir.camel.vectordb import VectorDBBlock
from memdir.errors import InvalidInputError
from memdir.llm import Message


@runtime_checkable
class AgentMemory(Protocol):
    """What an agent needs from its memory."""

    context_creator: ContextCreator

    def write_records(self, records: Iterable[MemoryRecord]) -> None: ...

    def retrieve(self) -> list[ContextRecord]: ...

    def get_context(self) -> tuple[list[Message], int]: ...

    def clear(self) -> None: ...


def _check_limit(retrieve_limit: int) -> int:
    if retrieve_limit < 1:
        raise InvalidInputError(f"retrieve_limit must be at least 1, got {retrieve_limit!r}")
    return retrieve_limit


def _last_user_text(records: Sequence[MemoryRecord]) -> str | None:
    for record in reversed(records):
        if record.role == "user" and record.content.strip():
            return record.content
    return None


class ChatHistoryMemory:
    """The recent conversation, packed by ``context_creator``."""

    def __init__(
        self,
        context_creator: ContextCreator,
        chat_history: ChatHistoryBlock | None = None,
        *,
        window_size: int | None = None,
    ) -> None:
        self.context_creator = context_creator
        self.chat_history = chat_history if chat_history is not None else ChatHistoryBlock()
        self.window_size = window_size

    def write_records(self, records: Iterable[MemoryRecord]) -> None:
        self.chat_history.write_records(records)

    def write_record(self, record: MemoryRecord) -> None:
        self.write_records([record])

    def retrieve(self) -> list[ContextRecord]:
        return self.chat_history.retrieve(self.window_size)

    def get_context(self) -> tuple[list[Message], int]:
        return self.context_creator.create_context(self.retrieve())

    def clear(self) -> None:
        self.chat_history.clear()

    def save(self, session_id: str | None = None) -> int:
        """Persist the chat history to a session transcript (see ``ChatHistoryBlock.save``)."""
        return self.chat_history.save(session_id)

    def load(self, session_id: str | None = None) -> int:
        """Load the chat history from a session transcript (see ``ChatHistoryBlock.load``)."""
        return self.chat_history.load(session_id)


class VectorDBMemory:
    """Long-term records retrieved by the current topic, packed by ``context_creator``."""

    def __init__(
        self,
        context_creator: ContextCreator,
        vector_db: VectorDBBlock,
        *,
        retrieve_limit: int = 3,
    ) -> None:
        self.context_creator = context_creator
        self.vector_db = vector_db
        self.retrieve_limit = _check_limit(retrieve_limit)
        self.topic: str | None = None

    def write_records(self, records: Iterable[MemoryRecord]) -> None:
        batch = list(records)
        self.vector_db.write_records(batch)
        self.topic = _last_user_text(batch) or self.topic

    def write_record(self, record: MemoryRecord) -> None:
        self.write_records([record])

    def retrieve(self, query: str | None = None) -> list[ContextRecord]:
        """Records matching ``query`` (default: the last user message written)."""
        topic = query or self.topic
        return self.vector_db.retrieve(topic, self.retrieve_limit) if topic else []

    def get_context(self) -> tuple[list[Message], int]:
        return self.context_creator.create_context(self.retrieve())

    def clear(self) -> None:
        self.vector_db.clear()
        self.topic = None


class LongtermAgentMemory:
    """Recent chat history plus relevant long-term records, deduplicated, ranked and packed."""

    def __init__(
        self,
        context_creator: ContextCreator,
        chat_history: ChatHistoryBlock,
        vector_db: VectorDBBlock,
        *,
        retrieve_limit: int = 3,
        window_size: int | None = None,
    ) -> None:
        self.context_creator = context_creator
        self.chat_history = chat_history
        self.vector_db = vector_db
        self.retrieve_limit = _check_limit(retrieve_limit)
        self.window_size = window_size

    def write_records(self, records: Iterable[MemoryRecord]) -> None:
        batch = list(records)
        self.chat_history.write_records(batch)
        self.vector_db.write_records([r for r in batch if r.role != "system"])

    def write_record(self, record: MemoryRecord) -> None:
        self.write_records([record])

    def retrieve(self, query: str | None = None) -> list[ContextRecord]:
        """Chat history and long-term hits for ``query`` (default: the last user message)."""
        chat = self.chat_history.retrieve(self.window_size)
        topic = query or _last_user_text(self.chat_history.records)
        recalled = self.vector_db.retrieve(topic, self.retrieve_limit) if topic else []
        return merge_records(chat, recalled)

    def get_context(self) -> tuple[list[Message], int]:
        return self.context_creator.create_context(self.retrieve())

    def clear(self) -> None:
        self.chat_history.clear()
        self.vector_db.clear()

    def save(self, session_id: str | None = None) -> int:
        return self.chat_history.save(session_id)

    def load(self, session_id: str | None = None) -> int:
        return self.chat_history.load(session_id)


def merge_records(
    chat: Sequence[ContextRecord], recalled: Sequence[ContextRecord]
) -> list[ContextRecord]:
    """Chat records plus the recalled ones they do not already hold, best score first.

    A recalled record is a duplicate when its uuid or its (role, folded text) is
    already present; repeated turns inside the chat history are all kept.
    The scores of the recalled records kept are divided by the best of them.
    """
    merged = dedupe_by_uuid(chat)
    uuids = {c.record.uuid for c in merged}
    contents = {c.record.content_key() for c in merged}
    fresh: list[ContextRecord] = []
    for context in recalled:
        key = context.record.content_key()
        if context.record.uuid in uuids or key in contents:
            continue
        uuids.add(context.record.uuid)
        contents.add(key)
        fresh.append(context)
    top = max((c.score for c in fresh), default=0.0)
    merged += [
        ContextRecord(c.record, c.score / top if top > 0 else 0.0, c.timestamp) for c in fresh
    ]
    return sorted(merged, key=lambda c: -c.score)
