"""Anthropic's Messages API over plain httpx.

System messages travel in the separate ``system`` field; our tool calls map to
``tool_use`` blocks and our tool messages to ``tool_result`` blocks in a user
turn. There is no native JSON schema mode here: ``response_schema`` is left to
the prompt (``complete_structured()`` states it) and tolerant parsing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from memdir.errors import ChatModelError, ConfigError
from memdir.llm.base import Completion, Message, ToolCall, ToolSpec
from memdir.llm.transport import (
    ErrorReply,
    JsonEndpoint,
    RetryPolicy,
    error_excerpt,
    error_field,
    normalise_finish_reason,
    read_usage,
    validate_base_url,
)

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


class AnthropicChatModel:
    """A Claude model behind ``POST {base_url}/v1/messages``.

    ``default_max_tokens`` is sent when ``complete()`` gets no ``max_tokens``
    (the API requires one).
    """

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        context_window: int = 200_000,
        default_max_tokens: int = 4096,
        timeout: float = 60.0,
        max_retries: int = 2,
        retry_initial_delay: float = 0.5,
        retry_max_delay: float = 30.0,
        temperature: float | None = None,
        anthropic_version: str = API_VERSION,
        api_key_setting: str = "llm.api_key",
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not model:
            raise ConfigError(
                "the anthropic chat model needs a model name, e.g. model='claude-sonnet-4-5'"
            )
        if default_max_tokens < 1:
            raise ConfigError(f"default_max_tokens must be positive, got {default_max_tokens!r}")
        self.model = model
        self.base_url = validate_base_url(base_url)
        self.context_window = context_window
        self.default_max_tokens = default_max_tokens
        self.temperature = temperature
        headers = {"anthropic-version": anthropic_version, "Accept": "application/json"}
        if api_key:
            headers["x-api-key"] = api_key
        self._endpoint = JsonEndpoint(
            f"{self.base_url}/v1/messages",
            provider=self.provider,
            headers=headers,
            timeout=timeout,
            policy=RetryPolicy(
                max_retries=max_retries,
                initial_delay=retry_initial_delay,
                max_delay=retry_max_delay,
            ),
            read_error=read_anthropic_error,
            api_key_setting=api_key_setting,
            secrets=[api_key] if api_key else [],
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"AnthropicChatModel(model={self.model!r}, base_url={self.base_url!r})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        response_schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens or self.default_max_tokens,
            "messages": encode_messages([m for m in messages if m.role != "system"]),
        }
        if system:
            payload["system"] = system
        if tools:
            payload["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
                for t in tools
            ]
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        return decode_completion(self._endpoint.post(payload), self._endpoint.label)

    def close(self) -> None:
        self._endpoint.close()

    def __enter__(self) -> AnthropicChatModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def encode_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Non-system messages as alternating user/assistant turns of content blocks."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = encode_blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def encode_blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in message.tool_calls
    )
    return blocks or [{"type": "text", "text": ""}]


def decode_completion(data: Mapping[str, Any], label: str) -> Completion:
    """A Messages API answer as a ``Completion``."""
    content = data.get("content")
    if not isinstance(content, list):
        raise ChatModelError(
            f"{label} answered without content blocks: {json.dumps(data)[:300]}; "
            "check that base_url points at the Anthropic API root"
        )
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_use":
            arguments = block.get("input")
            calls.append(
                ToolCall(
                    id=str(block.get("id") or f"toolu_{len(calls)}"),
                    name=str(block.get("name") or ""),
                    arguments=arguments if isinstance(arguments, dict) else {},
                )
            )
    return Completion(
        text="".join(texts),
        tool_calls=tuple(calls),
        finish_reason=normalise_finish_reason(data.get("stop_reason"), _FINISH_REASONS),
        usage=read_usage(data.get("usage"), "input_tokens", "output_tokens"),
    )


def read_anthropic_error(response: httpx.Response) -> ErrorReply:
    """The message of an Anthropic error body, and whether the prompt was too long."""
    error = error_field(response)
    if isinstance(error, dict) and error.get("message"):
        message = str(error["message"])
    else:
        message = error_excerpt(response)
    overflow = response.status_code in (400, 413) and "prompt is too long" in message.lower()
    return ErrorReply(message=message, context_length=overflow)
