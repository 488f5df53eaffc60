"""camel-ai's ``AgentMemory`` over a memdir session transcript, for a real ``ChatAgent``.

    memory = MemdirChatMemory.open(Memory.open(), "trip", model.token_counter, model.token_limit)
    agent = ChatAgent("You plan trips.", model=model, memory=memory)

``MemdirChatMemory`` is camel-ai's own ``ChatHistoryMemory`` (its retrieval, windowing,
scoring and context creation) whose key-value storage is the memdir session
``sessions/<agent>/<session_id>.jsonl``: each camel record is one transcript message
(role and text, what memdir's curation reads) with the record itself kept verbatim
beside it, so a reloaded record is the record written. Removals (``clear``,
``pop_records``, ``remove_records_by_indices``) are recorded as compactions: nothing is
erased, the file stays an audit trail.

**Restarts.** ``ChatAgent`` clears its memory when it is constructed (``init_messages``)
and then writes its system message. A memory opened on a session that already holds a
conversation *resumes* it: that first clear is not applied, and the agent's system
message replaces the stored one instead of being appended after the conversation (when
it is the same text nothing is written). Every later clear (``agent.reset()``,
``clear_memory()``) clears. ``resume=False`` starts a new conversation on the same
session (the old one stays in the transcript).

A record holding a credential is refused before anything is written
(``CredentialRefusedError``, a ``ValueError``), so the step fails with the reason instead
of keeping a key on disk.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from memdir.context import Session
from memdir.context.sessions import SessionMessage
from memdir.errors import SecretRejectedError
from memdir.integrations import missing, plain_records
from memdir.llm import Message
from memdir.llm.base import ToolCall
from memdir.memory import Memory

try:
    from camel.memories import ChatHistoryMemory, MemoryRecord, ScoreBasedContextCreator
    from camel.memories.base import BaseContextCreator
    from camel.memories.blocks import ChatHistoryBlock
    from camel.storages.key_value_storages import BaseKeyValueStorage, InMemoryKeyValueStorage
    from camel.utils import BaseTokenCounter
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing("camel-ai", "camel", exc) from None

log = logging.getLogger(__name__)

CLEAR = "camel-clear"
REMOVE = "camel-remove"
SYSTEM_ROLES = {"system", "developer"}


class CredentialRefusedError(SecretRejectedError, ValueError):
    """A record that looks like it holds a credential; nothing was written."""


class TranscriptStorage(BaseKeyValueStorage):  # type: ignore[misc]
    """camel-ai key-value storage kept as a memdir session transcript."""

    def __init__(self, transcript: Session) -> None:
        self.transcript = transcript

    def save(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        stored = plain_records(records, "a chat record", CredentialRefusedError)
        messages = [message_of(record) for record in stored]
        self.transcript.extend(messages, extras=stored)

    def load(self) -> list[dict[str, Any]]:
        return [record for _, record in self.entries()]

    def clear(self) -> None:
        self.remove([message_id for message_id, _ in self.entries()], CLEAR)

    def entries(self) -> list[tuple[str, dict[str, Any]]]:
        """``(message id, camel record)`` of the conversation as it stands."""
        if not self.transcript.exists:
            return []
        return [
            (stored.id, stored.extra if stored.extra is not None else _record(stored))
            for stored in self.transcript.load().current()
        ]

    def remove(self, message_ids: list[str], method: str = REMOVE) -> None:
        if message_ids:
            self.transcript.record_compaction(summary="", replaced_ids=message_ids, method=method)


class MemdirChatMemory(ChatHistoryMemory):  # type: ignore[misc]
    """camel-ai's ``ChatHistoryMemory`` persisted as the memdir session ``session_id``.

    Build it with :meth:`open` (a ``ScoreBasedContextCreator`` for ``token_limit``) or pass
    your own ``context_creator``. ``resume`` (default True): a conversation already in the
    session survives the clear a new ``ChatAgent`` does (see the module docstring).
    """

    def __init__(
        self,
        context_creator: BaseContextCreator,
        memory: Memory,
        session_id: str,
        *,
        window_size: int | None = None,
        agent_id: str | None = None,
        resume: bool = True,
    ) -> None:
        self.storage = TranscriptStorage(memory.session(session_id))
        super().__init__(
            context_creator, storage=self.storage, window_size=window_size, agent_id=agent_id
        )
        self.memory = memory
        self.session_id = session_id
        self._resuming = resume and bool(self.storage.entries())

    @classmethod
    def open(
        cls,
        memory: Memory,
        session_id: str,
        token_counter: BaseTokenCounter,
        token_limit: int,
        **options: Any,
    ) -> MemdirChatMemory:
        """A memory on ``session_id`` packed by camel-ai's ``ScoreBasedContextCreator``, as
        ``ChatAgent`` packs its own: pass the model's ``token_counter`` and ``token_limit``."""
        creator = ScoreBasedContextCreator(token_counter, token_limit)
        return cls(creator, memory, session_id, **options)

    def clear(self) -> None:
        if self._resuming:  # the clear of a new ChatAgent: the loaded conversation stays
            log.debug("session %s resumed: the agent's first clear is not applied", self.session_id)
            return
        super().clear()

    def write_records(self, records: list[MemoryRecord]) -> None:
        if self._resuming:
            self._resuming = False
            records = self._resume_with(list(records))
        if records:
            super().write_records(records)

    def _resume_with(self, records: list[MemoryRecord]) -> list[MemoryRecord]:
        """The first write after a resumed session: a system record replaces the stored
        system records (none written when the text is the same); others are appended."""
        if not records or records[0].role_at_backend.value not in SYSTEM_ROLES:
            return records
        system, rest = records[0], records[1:]
        entries = self.storage.entries()
        stored = [(i, r) for i, r in entries if r.get("role_at_backend") in SYSTEM_ROLES]
        if [r["message"].get("content") for _, r in stored] == [system.message.content]:
            return rest
        self.storage.remove([i for i, _ in entries], CLEAR)  # the system message goes first
        stored_ids = {i for i, _ in stored}
        conversation = [MemoryRecord.from_dict(r) for i, r in entries if i not in stored_ids]
        super().write_records([system, *conversation])
        return rest

    def pop_records(self, count: int) -> list[MemoryRecord]:
        return self._edit(lambda block: block.pop_records(count))

    def remove_records_by_indices(self, indices: list[int]) -> list[MemoryRecord]:
        return self._edit(lambda block: block.remove_records_by_indices(indices))

    def _edit(self, edit: Any) -> list[MemoryRecord]:
        """Run camel-ai's own removal on a copy; record only what it removed."""
        self._resuming = False
        entries = self.storage.entries()
        scratch = ChatHistoryBlock(storage=InMemoryKeyValueStorage())
        scratch.storage.save([record for _, record in entries])
        removed: list[MemoryRecord] = edit(scratch)
        kept = {record["uuid"] for record in scratch.storage.load()}
        self.storage.remove([i for i, record in entries if record.get("uuid") not in kept])
        return removed


def message_of(record: dict[str, Any]) -> Message:
    """The memdir message a camel record reads as (what curation and search see)."""
    message = record.get("message") or {}
    role = str(record.get("role_at_backend", "user"))
    content = str(message.get("content") or "")
    if role in SYSTEM_ROLES:
        return Message("system", content)
    if role in ("tool", "function"):
        result = message.get("result")
        text = content or (result if isinstance(result, str) else json.dumps(result, default=str))
        return Message("tool", text, tool_call_id=str(message.get("tool_call_id") or "call"))
    if role == "assistant" and "args" in message:
        args = message.get("args")
        call = ToolCall(
            str(message.get("tool_call_id") or "call"),
            str(message.get("func_name") or ""),
            args if isinstance(args, dict) else {"args": args},
        )
        return Message("assistant", content, tool_calls=(call,))
    return Message("assistant" if role == "assistant" else "user", content)


def _record(stored: SessionMessage) -> dict[str, Any]:
    """The camel record of a message memdir wrote (such as a compaction's summary)."""
    role = stored.message.role if stored.message.role in ("system", "assistant") else "user"
    record: dict[str, Any] = MemoryRecord.from_dict(
        {
            "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"memdir:{stored.id}")),
            "message": {
                "__class__": "BaseMessage",
                "role_name": role.capitalize(),
                "role_type": "assistant" if role == "assistant" else "user",
                "content": stored.message.content,
            },
            "role_at_backend": role,
            "extra_info": {},
            "timestamp": stored.timestamp.timestamp(),
            "agent_id": "",
        }
    ).to_dict()
    return record
