"""Any OpenAI-compatible chat completions endpoint, over plain httpx.

Works with OpenAI itself and with the servers that copy its API: Ollama
(``http://localhost:11434/v1``), LM Studio (``http://localhost:1234/v1``), vLLM
(``http://localhost:8000/v1``), OpenRouter (``https://openrouter.ai/api/v1``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import httpx

from memdir.errors import ChatModelError, ConfigError
from memdir.llm.base import Completion, Message, ToolCall, ToolSpec
from memdir.llm.structured import extract_json_object
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

StructuredMode = Literal["json_schema", "json_object", "prompt"]
STRUCTURED_MODES: tuple[str, ...] = ("json_schema", "json_object", "prompt")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_CONTEXT_WINDOW = 8192

# Windows of a few well-known model families; anything else gets the
# conservative default unless the caller passes context_window.
_KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gpt-3.5-turbo", 16_385),
)
_CONTEXT_LENGTH_TEXT = re.compile(
    r"maximum context length|context[_ ]length[_ ]exceeded|exceeds the context window",
    re.IGNORECASE,
)
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_FINISH_REASONS = {"function_call": "tool_calls"}


class OpenAIChatModel:
    """A model behind ``POST {base_url}/chat/completions``.

    ``structured_output`` picks how a ``response_schema`` is sent: ``json_schema``
    (``response_format`` with the schema; OpenAI, recent Ollama, vLLM, LM
    Studio), ``json_object`` (JSON mode without a schema) or ``prompt`` (nothing
    sent; rely on the prompt and tolerant parsing). ``max_tokens_field`` is
    ``max_tokens`` for most servers and ``max_completion_tokens`` for OpenAI's
    reasoning models.
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        context_window: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        retry_initial_delay: float = 0.5,
        retry_max_delay: float = 30.0,
        structured_output: StructuredMode = "json_schema",
        max_tokens_field: str = "max_tokens",
        temperature: float | None = None,
        extra_headers: Mapping[str, str] | None = None,
        api_key_setting: str = "llm.api_key",
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not model:
            raise ConfigError("the openai chat model needs a model name, e.g. model='gpt-4o-mini'")
        if structured_output not in STRUCTURED_MODES:
            raise ConfigError(
                f"structured_output {structured_output!r} is not one of {list(STRUCTURED_MODES)}"
            )
        self.model = model
        self.base_url = validate_base_url(base_url)
        self.context_window = context_window or default_context_window(model)
        self.structured_output = structured_output
        self.max_tokens_field = max_tokens_field
        self.temperature = temperature
        headers = {"Accept": "application/json", **(extra_headers or {})}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._endpoint = JsonEndpoint(
            f"{self.base_url}/chat/completions",
            provider=self.provider,
            headers=headers,
            timeout=timeout,
            policy=RetryPolicy(
                max_retries=max_retries,
                initial_delay=retry_initial_delay,
                max_delay=retry_max_delay,
            ),
            read_error=read_openai_error,
            api_key_setting=api_key_setting,
            secrets=[api_key] if api_key else [],
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, base_url={self.base_url!r})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        response_schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [encode_message(m) for m in messages],
        }
        if tools:
            payload["tools"] = [encode_tool(t) for t in tools]
        if max_tokens is not None:
            payload[self.max_tokens_field] = max_tokens
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if response_schema is not None and self.structured_output != "prompt":
            payload["response_format"] = self._response_format(response_schema)
        return decode_completion(self._endpoint.post(payload), self._endpoint.label)

    def close(self) -> None:
        self._endpoint.close()

    def __enter__(self) -> OpenAIChatModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _response_format(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        if self.structured_output == "json_object":
            return {"type": "json_object"}
        title = str(schema.get("title") or "response")
        name = _SCHEMA_NAME.sub("_", title)[:64] or "response"
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": dict(schema), "strict": False},
        }


def default_context_window(model: str) -> int:
    """The known window of an OpenAI model family, else a conservative default."""
    bare = model.rsplit("/", 1)[-1].lower()
    for prefix, window in _KNOWN_WINDOWS:
        if bare.startswith(prefix):
            return window
    return DEFAULT_CONTEXT_WINDOW


def encode_message(message: Message) -> dict[str, Any]:
    """Our message in the chat completions format."""
    encoded: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "tool":
        encoded["tool_call_id"] = message.tool_call_id
    elif message.name:
        encoded["name"] = message.name
    if message.tool_calls:
        encoded["content"] = message.content or None
        encoded["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in message.tool_calls
        ]
    return encoded


def encode_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
        },
    }


def decode_completion(data: Mapping[str, Any], label: str) -> Completion:
    """A chat completions answer as a ``Completion``."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ChatModelError(
            f"{label} answered without choices: {json.dumps(data)[:300]}; "
            "check that base_url points at an OpenAI-compatible API"
        )
    choice = choices[0]
    message = choice.get("message") or {}
    calls = tuple(
        decode_tool_call(raw, index, label)
        for index, raw in enumerate(message.get("tool_calls") or [])
    )
    return Completion(
        text=message.get("content") or "",
        tool_calls=calls,
        finish_reason=normalise_finish_reason(choice.get("finish_reason"), _FINISH_REASONS),
        usage=read_usage(data.get("usage"), "prompt_tokens", "completion_tokens"),
    )


def decode_tool_call(raw: Mapping[str, Any], index: int, label: str) -> ToolCall:
    function = raw.get("function") or {}
    name = str(function.get("name") or "")
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        parsed: dict[str, Any] | None = arguments
    elif not arguments:
        parsed = {}
    else:
        parsed = extract_json_object(str(arguments))
    if parsed is None:
        raise ChatModelError(
            f"{label} returned a call to tool {name!r} whose arguments are not a JSON "
            f"object: {str(arguments)[:200]!r}; retry, or use a model with better tool support"
        )
    return ToolCall(id=str(raw.get("id") or f"call_{index}"), name=name, arguments=parsed)


def read_openai_error(response: httpx.Response) -> ErrorReply:
    """The message of an OpenAI-style error body, and whether it is a context overflow."""
    error = error_field(response)
    if isinstance(error, dict):
        message = str(error.get("message") or error_excerpt(response))
        code = str(error.get("code") or "")
    elif isinstance(error, str):  # some compatible servers send {"error": "..."}
        message, code = error, ""
    else:
        message, code = error_excerpt(response), ""
    overflow = code == "context_length_exceeded" or bool(_CONTEXT_LENGTH_TEXT.search(message))
    return ErrorReply(message=message, context_length=overflow)
