"""The anthropic provider against a live Messages-API server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pydantic
import pytest
from llm_server import ScriptedServer, anthropic_answer

from memdir.errors import ChatModelError, ContextLengthError
from memdir.llm import (
    AnthropicChatModel,
    Message,
    ToolCall,
    ToolSpec,
    complete_structured,
)

API_KEY = "sk-ant-test-SECRET-0987654321"


@pytest.fixture
def model(server: ScriptedServer) -> Iterator[AnthropicChatModel]:
    with AnthropicChatModel(
        "claude-test",
        api_key=API_KEY,
        base_url=server.url,
        timeout=5.0,
        retry_initial_delay=0.01,
    ) as chat:
        yield chat


def test_plain_completion_sends_system_separately(
    server: ScriptedServer, model: AnthropicChatModel
) -> None:
    server.answer(anthropic_answer())
    completion = model.complete(
        [Message("system", "Be brief."), Message("system", "Be kind."), Message("user", "Hi")]
    )
    assert completion.text == "Hello!"
    assert completion.finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.total_tokens == 25
    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == API_KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body == {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": "Be brief.\n\nBe kind.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
    }


def test_tool_use_blocks_map_to_tool_calls(
    server: ScriptedServer, model: AnthropicChatModel
) -> None:
    tool = ToolSpec("memory_get", "Read lines", {"type": "object", "properties": {}})
    server.answer(
        anthropic_answer(
            [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "memory_get",
                    "input": {"path": "MEMORY.md"},
                },
            ],
            stop_reason="tool_use",
        )
    )
    first = model.complete([Message("user", "What do you remember?")], tools=[tool], max_tokens=100)
    assert first.text == "Let me look."
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls == (ToolCall("toolu_1", "memory_get", {"path": "MEMORY.md"}),)
    assert server.requests[0].body["tools"] == [
        {"name": "memory_get", "description": "Read lines", "input_schema": tool.parameters}
    ]
    assert server.requests[0].body["max_tokens"] == 100

    server.answer(anthropic_answer([{"type": "text", "text": "You like tea."}]))
    model.complete(
        [
            Message("user", "What do you remember?"),
            first.to_message(),
            Message("tool", "likes tea", tool_call_id="toolu_1"),
            Message("user", "Short answer please."),
        ]
    )
    sent = server.requests[1].body["messages"]
    assert [turn["role"] for turn in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "memory_get", "input": {"path": "MEMORY.md"}},
    ]
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "likes tea"},
        {"type": "text", "text": "Short answer please."},
    ]


def test_prompt_too_long_is_context_length_error(
    server: ScriptedServer, model: AnthropicChatModel
) -> None:
    server.always(
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 210000 tokens > 200000",
            },
        },
        status=400,
    )
    with pytest.raises(ContextLengthError, match="prompt is too long"):
        model.complete([Message("user", "x")])
    assert len(server.requests) == 1


def test_overloaded_is_retried(server: ScriptedServer, model: AnthropicChatModel) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    server.answer(overloaded, status=529)
    server.answer(overloaded, status=529)
    server.answer(anthropic_answer())
    assert model.complete([Message("user", "Hi")]).text == "Hello!"
    assert len(server.requests) == 3


def test_auth_failure(server: ScriptedServer) -> None:
    server.always(
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        },
        status=401,
    )
    with (
        AnthropicChatModel(
            "claude-test",
            api_key=API_KEY,
            base_url=server.url,
            api_key_setting="MEMDIR_LLM__API_KEY",
        ) as chat,
        pytest.raises(
            ChatModelError,
            match="invalid x-api-key; check the api key setting 'MEMDIR_LLM__API_KEY'",
        ) as info,
    ):
        chat.complete([Message("user", "Hi")])
    assert API_KEY not in str(info.value)
    assert len(server.requests) == 1


class Verdict(pydantic.BaseModel):
    should_update: bool
    reason: str


def test_structured_output_through_the_prompt(
    server: ScriptedServer, model: AnthropicChatModel
) -> None:
    server.answer(anthropic_answer([{"type": "text", "text": "Here you go"}]))
    server.answer(
        anthropic_answer(
            [{"type": "text", "text": 'Here: {"should_update": true, "reason": "new fact"} done'}]
        )
    )
    verdict = complete_structured(model, [Message("user", "Judge this")], Verdict)
    assert verdict == Verdict(should_update=True, reason="new fact")
    first = server.requests[0].body
    assert "response_format" not in first
    assert "should_update" in first["system"]
    assert [turn["role"] for turn in server.requests[1].body["messages"]] == [
        "user",
        "assistant",
        "user",
    ]
