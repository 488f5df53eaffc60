"""The chat model contract: messages in, a completion out.

A ``ChatModel`` is anything with ``provider``, ``model``, ``context_window`` and a
synchronous ``complete()``. Values crossing the contract are frozen dataclasses.
Providers live in one module each and register a factory in
``memdir.llm.registry``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from memdir.errors import InvalidInputError

Role = Literal["system", "user", "assistant", "tool"]
ROLES: frozenset[str] = frozenset({"system", "user", "assistant", "tool"})

FinishReason = str
"""Normalised where the provider allows: ``stop``, ``length``, ``tool_calls``,
``content_filter``; any other value is passed through as the provider sent it."""


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: a name, what it does and a JSON schema for its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


@dataclass(frozen=True)
class Message:
    """One turn of a conversation.

    ``tool_calls`` only appear on assistant messages; a ``tool`` message answers
    one call and names it in ``tool_call_id``. ``name`` is an optional speaker or
    tool name that providers pass on where they support it.
    """

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InvalidInputError(
                f"message role {self.role!r} is not one of {sorted(ROLES)}; "
                "use system, user, assistant or tool"
            )
        if not isinstance(self.content, str):
            raise InvalidInputError(
                f"message content must be a string, got {type(self.content).__name__}; "
                "render structured content to text first"
            )
        if self.tool_calls and self.role != "assistant":
            raise InvalidInputError(
                f"a {self.role!r} message cannot carry tool_calls; only assistant messages can"
            )
        if self.role == "tool" and not self.tool_call_id:
            raise InvalidInputError(
                "a 'tool' message needs the tool_call_id of the call it answers"
            )


@dataclass(frozen=True)
class Usage:
    """Token counts reported by the provider."""

    input_tokens: int
    output_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Completion:
    """The model's answer: text, requested tool calls, why it stopped, token usage."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: FinishReason | None = None
    usage: Usage | None = None

    def to_message(self) -> Message:
        """The assistant message to append to the conversation."""
        return Message("assistant", self.text, tool_calls=self.tool_calls)


@runtime_checkable
class ChatModel(Protocol):
    """A chat model behind one synchronous call.

    ``provider`` and ``model`` identify it; ``context_window`` is its input budget
    in tokens. ``complete()`` raises ``ChatModelError`` (``ContextLengthError``
    when the request is too long for the window).
    """

    provider: str
    model: str
    context_window: int

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        response_schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """Answer the conversation.

        ``response_schema`` is a JSON schema the reply should match. Providers
        that can enforce it natively do; the others ignore it, so callers that
        need JSON use ``complete_structured()``, which also states the schema in
        the prompt and validates the reply.
        """
        ...
