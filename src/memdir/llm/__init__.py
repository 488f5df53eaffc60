"""memdir.llm layer.

Chat models behind one small Protocol (``ChatModel``) and a registry:
``create_chat_model("openai" | "anthropic" | "scripted" | "none", **options)``.
``complete_structured()`` turns a model into a validated pydantic instance;
``estimate_tokens()`` sizes text and messages without any network.

The HTTP providers (``OpenAIChatModel``, ``AnthropicChatModel``, ``RetryPolicy``)
load httpx, so they are imported on first use: a process that never talks to a
model (a one-shot search) does not pay for them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from memdir.llm.base import ChatModel, Completion, Message, Role, ToolCall, ToolSpec, Usage
from memdir.llm.registry import (
    ENTRY_POINT_GROUP,
    available_chat_models,
    create_chat_model,
    register_chat_model,
)
from memdir.llm.scripted import ScriptedCall, ScriptedChatModel
from memdir.llm.structured import complete_structured, extract_json_object
from memdir.llm.tokens import (
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_tokens,
    token_counting_method,
)

if TYPE_CHECKING:
    from memdir.llm.anthropic_chat import AnthropicChatModel
    from memdir.llm.openai_chat import OpenAIChatModel
    from memdir.llm.transport import RetryPolicy

_LAZY = {
    "AnthropicChatModel": "anthropic_chat",
    "OpenAIChatModel": "openai_chat",
    "RetryPolicy": "transport",
}

__all__ = [
    "ENTRY_POINT_GROUP",
    "AnthropicChatModel",
    "ChatModel",
    "Completion",
    "Message",
    "OpenAIChatModel",
    "RetryPolicy",
    "Role",
    "ScriptedCall",
    "ScriptedChatModel",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "available_chat_models",
    "complete_structured",
    "create_chat_model",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "estimate_tokens",
    "extract_json_object",
    "register_chat_model",
    "token_counting_method",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
