"""The OpenAI Agents SDK's ``Session`` over a memdir session transcript.

    session = MemdirSession("support-42", Memory.open())
    result = await Runner.run(agent, "Hi", session=session)

The conversation is memdir session data, not Markdown: the SDK's items go to the
session's JSONL transcript (``sessions/<agent>/<session_id>.jsonl``), one message per
item, the item itself kept verbatim beside the message (``SessionMessage.extra``) so
``get_items`` hands the SDK back exactly what it stored. A transcript is the raw
material of memory, not memory: memdir's curation reads the same file
(``Memory.extract(session_id)``, ``Memory.end_session(session_id)``) and writes what
lasts into Markdown, as for a conversation of ``memdir chat``. ``pop_item`` and
``clear_session`` are recorded as compactions, so the file stays an audit trail and
nothing is erased.

Items that hold a credential are refused before anything is written
(``CredentialRefusedError``, the SDK's ``UserError``), so a run that meets one fails
with the reason instead of keeping a key on disk.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from filelock import FileLock

from memdir.context import Session
from memdir.errors import InvalidInputError, SecretRejectedError
from memdir.integrations import missing, plain_records
from memdir.llm import Message
from memdir.llm.base import ToolCall
from memdir.memory import Memory

try:
    from agents import SessionSettings, TResponseInputItem
    from agents.exceptions import UserError
    from agents.memory.session_settings import coerce_session_settings, resolve_session_limit
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing("openai-agents", "openai-agents", exc) from None

POP = "agents-pop"
CLEAR = "agents-clear"


class CredentialRefusedError(SecretRejectedError, UserError):
    """Session items that look like they hold a credential; nothing was written."""


class MemdirSession:
    """An Agents SDK session kept as the memdir session ``session_id`` of ``memory``.

    ``session_id`` is 1-128 letters, digits, ``_`` or ``-`` (memdir's session ids);
    ``memory`` an open :class:`memdir.Memory` (the caller closes it). Processes may share
    a session: appends are atomic and ``pop_item``/``clear_session`` hold a lock.
    """

    def __init__(
        self,
        session_id: str,
        memory: Memory,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        try:
            self.transcript: Session = memory.session(session_id)
        except InvalidInputError as exc:
            raise UserError(str(exc)) from exc
        self.session_id = session_id
        self.memory = memory
        self.session_settings = (
            SessionSettings() if session_settings is None
            else coerce_session_settings(session_settings)
        )  # fmt: skip
        self._lock = FileLock(f"{self.transcript.path}.lock")

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation, oldest first; with ``limit``, its latest ``limit`` items."""
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted is not None and wanted <= 0:
            return []
        items = await asyncio.to_thread(self._items)
        return items if wanted is None else items[-wanted:]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` in one write; refused whole if one holds a credential."""
        if not items:
            return
        stored = plain_records(items, "the session items", CredentialRefusedError)
        messages = [message_of(item) for item in stored]
        await asyncio.to_thread(self.transcript.extend, messages, extras=stored)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the latest item and return it (None when the session is empty)."""
        return await asyncio.to_thread(self._pop)

    async def clear_session(self) -> None:
        """Remove every item (recorded, the transcript keeps them for audit)."""
        await asyncio.to_thread(self._clear)

    # -- on the transcript ----------------------------------------------------------------
    def _current(self) -> list[tuple[str, TResponseInputItem]]:
        if not self.transcript.exists:
            return []
        return [
            (stored.id, item_of(stored.message, stored.extra))
            for stored in self.transcript.load().current()
        ]

    def _items(self) -> list[TResponseInputItem]:
        return [item for _, item in self._current()]

    def _pop(self) -> TResponseInputItem | None:
        with self._lock:
            current = self._current()
            if not current:
                return None
            last_id, item = current[-1]
            self.transcript.record_compaction(summary="", replaced_ids=[last_id], method=POP)
            return item

    def _clear(self) -> None:
        with self._lock:
            ids = [message_id for message_id, _ in self._current()]
            if ids:
                self.transcript.record_compaction(summary="", replaced_ids=ids, method=CLEAR)


def message_of(item: dict[str, Any]) -> Message:
    """The memdir message an SDK item reads as (what curation and search see)."""
    kind, role = item.get("type"), item.get("role")
    if kind in (None, "message") and role in ("user", "assistant", "system", "developer"):
        return Message("system" if role == "developer" else role, _text(item.get("content")))
    if kind == "function_call":
        call_id = str(item.get("call_id") or item.get("id") or "call")
        call = ToolCall(call_id, str(item.get("name", "")), _arguments(item.get("arguments")))
        return Message("assistant", "", tool_calls=(call,))
    if kind == "function_call_output":
        call_id = str(item.get("call_id") or "call")
        return Message("tool", _text(item.get("output")), tool_call_id=call_id)
    return Message("assistant", f"[{kind}] {_text(item.get('summary') or item.get('content'))}")


def item_of(message: Message, extra: dict[str, Any] | None) -> TResponseInputItem:
    """The SDK item of a stored message: its own item, or (a message memdir wrote, such as
    a compaction's summary) an easy input message of its text."""
    if extra is not None:
        return extra  # type: ignore[return-value]
    role = message.role if message.role in ("user", "assistant", "system") else "assistant"
    return {"role": role, "content": message.content}


def _text(content: Any) -> str:
    """The text of an item's content: a string, or the text of its parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(filter(None, (_text(part) for part in content)))
    if isinstance(content, dict):
        for key in ("text", "refusal", "output"):
            if isinstance(content.get(key), str):
                return str(content[key])
        return ""
    return str(content)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}
