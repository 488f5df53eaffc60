"""memdir.llm layer.

Chat models behind one small Protocol (``ChatModel``) and a registry:
``create_chat_model("openai" | "anthropic" | "scripted" | "none", **options)``.
``complete_structured()`` turns a model into a validated pydantic instance;
``estimate_tokens()`` sizes text and messages without any network.
"""

from __future__ import annotations

from memdir.llm.anthropic_chat import AnthropicChatModel
from memdir.llm.base import ChatModel, Completion, Message, Role, ToolCall, ToolSpec, Usage
from memdir.llm.openai_chat import OpenAIChatModel
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
from memdir.llm.transport import RetryPolicy

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
