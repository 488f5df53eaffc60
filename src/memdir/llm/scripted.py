"""A scripted chat model: the test double that ships with memdir.

Drive it with canned replies or with a function, pass it wherever a
``ChatModel`` goes, then read ``calls`` to see what it was asked::

    model = ScriptedChatModel(["first answer", Completion("", tool_calls=(...,))])
    model = ScriptedChatModel(lambda messages, tools, schema: '{"ok": true}')

A canned reply may also be a ``ChatModelError`` instance, which is raised
(e.g. ``ContextLengthError`` to exercise emergency compaction). A model whose
real window is smaller than it says refuses long requests as a server does::

    model = ScriptedChatModel(reply, context_window=8192, accepts_tokens=3300)

refuses every request whose messages exceed 3,300 tokens (memdir's estimate)
with the ``ContextLengthError`` an OpenAI-compatible server words ("maximum
context length is 3300 tokens. However, your messages resulted in N tokens").
A refused request is recorded in ``calls`` too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memdir.errors import ChatModelError, ContextLengthError
from memdir.llm.base import Completion, Message, ToolSpec
from memdir.llm.tokens import estimate_messages_tokens

Reply = str | Completion | ChatModelError
ReplyFunction = Callable[
    [Sequence[Message], Sequence[ToolSpec] | None, Mapping[str, Any] | None],
    str | Completion,
]


@dataclass(frozen=True)
class ScriptedCall:
    """One request the scripted model received."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] | None
    response_schema: Mapping[str, Any] | None
    max_tokens: int | None


class ScriptedChatModel:
    """A ``ChatModel`` that answers from a script and records every call."""

    provider = "scripted"

    def __init__(
        self,
        replies: ReplyFunction | Iterable[Reply] = (),
        *,
        model: str = "scripted",
        context_window: int = 8192,
        accepts_tokens: int | None = None,
    ) -> None:
        self.model = model
        self.context_window = context_window
        self.accepts_tokens = accepts_tokens
        self.calls: list[ScriptedCall] = []
        self._function: ReplyFunction | None = None
        self._replies: list[Reply] = []
        if callable(replies):
            self._function = replies
        else:
            self._replies = list(replies)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ScriptedChatModel(model={self.model!r}, calls={len(self.calls)})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        response_schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        call = ScriptedCall(
            messages=tuple(messages),
            tools=tuple(tools) if tools is not None else None,
            response_schema=response_schema,
            max_tokens=max_tokens,
        )
        reply: Reply
        with self._lock:
            self.calls.append(call)
            self._refuse_if_too_long(call.messages)
            if self._function is None:
                reply = self._pop_reply()
        if self._function is not None:  # called outside the lock: it may call us back
            reply = self._function(call.messages, call.tools, call.response_schema)
        if isinstance(reply, ChatModelError):
            raise reply
        if isinstance(reply, Completion):
            return reply
        return Completion(text=reply, finish_reason="stop")

    def _refuse_if_too_long(self, messages: Sequence[Message]) -> None:
        if self.accepts_tokens is None:
            return
        tokens = estimate_messages_tokens(messages)
        if tokens > self.accepts_tokens:
            raise ContextLengthError(
                f"This model's maximum context length is {self.accepts_tokens} tokens. "
                f"However, your messages resulted in {tokens} tokens. Please reduce the "
                "length of the messages."
            )

    @property
    def remaining(self) -> int:
        """Canned replies not yet used (0 for a function-driven model)."""
        return len(self._replies)

    def _pop_reply(self) -> Reply:
        if not self._replies:
            raise ChatModelError(
                f"scripted model {self.model!r} ran out of replies after "
                f"{len(self.calls) - 1} calls; add more replies to its script"
            )
        return self._replies.pop(0)
