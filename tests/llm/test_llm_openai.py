"""The openai provider against a live OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator
from typing import Any

import pydantic
import pytest
from llm_server import ScriptedServer, openai_answer

from memdir.errors import ChatModelError, ConfigError, ContextLengthError, StructuredOutputError
from memdir.llm import (
    Message,
    OpenAIChatModel,
    ToolCall,
    ToolSpec,
    complete_structured,
)

API_KEY = "sk-test-SECRET-1234567890"


class Note(pydantic.BaseModel):
    title: str
    tags: list[str]


@pytest.fixture
def model(server: ScriptedServer) -> Iterator[OpenAIChatModel]:
    with OpenAIChatModel(
        "test-model",
        base_url=f"{server.url}/v1",
        api_key=API_KEY,
        timeout=5.0,
        max_retries=2,
        retry_initial_delay=0.01,
    ) as chat:
        yield chat


def test_plain_completion(server: ScriptedServer, model: OpenAIChatModel) -> None:
    server.answer(openai_answer("Hello there"))
    completion = model.complete(
        [Message("system", "Be brief."), Message("user", "Hi", name="ana")], max_tokens=50
    )
    assert completion.text == "Hello there"
    assert completion.finish_reason == "stop"
    assert completion.usage is not None
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (12, 3)
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.body == {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi", "name": "ana"},
        ],
        "max_tokens": 50,
    }


def test_no_api_key_sends_no_authorization(server: ScriptedServer) -> None:
    server.answer(openai_answer("ok"))
    with OpenAIChatModel("llama3.2", base_url=f"{server.url}/v1/") as chat:
        assert chat.complete([Message("user", "Hi")]).text == "ok"
    assert "authorization" not in server.requests[0].headers
    assert server.requests[0].path == "/v1/chat/completions"


def test_tool_calls_round_trip(server: ScriptedServer, model: OpenAIChatModel) -> None:
    tool = ToolSpec(
        "memory_search",
        "Search memory",
        {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    )
    server.answer(
        openai_answer(
            None,
            finish_reason="tool_calls",
            tool_calls=[
                {
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "memory_search", "arguments": '{"query": "cats"}'},
                }
            ],
        )
    )
    first = model.complete([Message("user", "What about cats?")], tools=[tool])
    assert first.text == ""
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls == (ToolCall("call_7", "memory_search", {"query": "cats"}),)
    assert server.requests[0].body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "memory_search",
                "description": "Search memory",
                "parameters": tool.parameters,
            },
        }
    ]

    server.answer(openai_answer("Cats are liked."))
    conversation = [
        Message("user", "What about cats?"),
        first.to_message(),
        Message("tool", "USER.md:3 likes cats", tool_call_id="call_7"),
    ]
    assert model.complete(conversation, tools=[tool]).text == "Cats are liked."
    sent = server.requests[1].body["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_7",
                "type": "function",
                "function": {"name": "memory_search", "arguments": '{"query": "cats"}'},
            }
        ],
    }
    assert sent[2] == {"role": "tool", "content": "USER.md:3 likes cats", "tool_call_id": "call_7"}


def test_unparseable_tool_arguments_are_an_error(
    server: ScriptedServer, model: OpenAIChatModel
) -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{not json"}}
    server.answer(openai_answer(None, tool_calls=[call]))
    with pytest.raises(ChatModelError, match="'f' whose arguments are not a JSON object"):
        model.complete([Message("user", "go")])


def test_structured_output_repaired_after_malformed_json(
    server: ScriptedServer, model: OpenAIChatModel
) -> None:
    server.answer(openai_answer('Sure! {"title": "Cats", "tags": "pets"'))
    server.answer(openai_answer('```json\n{"title": "Cats", "tags": ["pets"]}\n```'))
    note = complete_structured(model, [Message("user", "Summarise")], Note)
    assert note == Note(title="Cats", tags=["pets"])
    assert len(server.requests) == 2
    first, repair = server.requests[0].body, server.requests[1].body
    assert first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["name"] == "Note"
    # the schema as sent closes the object, so a constraining server stops after the fields
    assert first["response_format"]["json_schema"]["schema"] == {
        **Note.model_json_schema(),
        "additionalProperties": False,
    }
    assert first["messages"][0]["role"] == "system"
    assert "JSON schema" in first["messages"][0]["content"]
    assert repair["messages"][-2] == {
        "role": "assistant",
        "content": 'Sure! {"title": "Cats", "tags": "pets"',
    }
    assert "no JSON object" in repair["messages"][-1]["content"]


def test_structured_output_fails_after_one_repair(
    server: ScriptedServer, model: OpenAIChatModel
) -> None:
    server.answer(openai_answer('{"title": "Cats"}'))
    server.answer(openai_answer('{"title": "Cats", "tags": 3}'))
    with pytest.raises(StructuredOutputError, match="no valid Note after one repair") as info:
        complete_structured(model, [Message("user", "Summarise")], Note)
    assert "tags" in str(info.value)
    assert len(server.requests) == 2
    assert "tags" in server.requests[1].body["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("json_object", {"type": "json_object"}), ("prompt", None)],
)
def test_structured_output_modes(
    server: ScriptedServer, mode: Any, expected: dict[str, str] | None
) -> None:
    server.answer(openai_answer('{"title": "a", "tags": []}'))
    with OpenAIChatModel("m", base_url=server.url, structured_output=mode) as chat:
        complete_structured(chat, [Message("user", "x")], Note)
    assert server.requests[0].body.get("response_format") == expected


def test_retries_a_500_then_succeeds(server: ScriptedServer, model: OpenAIChatModel) -> None:
    server.answer({"error": {"message": "boom"}}, status=500)
    server.answer(openai_answer("recovered"))
    assert model.complete([Message("user", "Hi")]).text == "recovered"
    assert len(server.requests) == 2


def test_gives_up_after_retries(server: ScriptedServer, model: OpenAIChatModel) -> None:
    server.always({"error": {"message": "still broken"}}, status=503)
    with pytest.raises(ChatModelError, match="still failing after 3 attempts") as info:
        model.complete([Message("user", "Hi")])
    assert "HTTP 503" in str(info.value)
    assert "still broken" in str(info.value)
    assert len(server.requests) == 3


def test_honours_retry_after(server: ScriptedServer, model: OpenAIChatModel) -> None:
    server.answer({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "0.4"})
    server.answer(openai_answer("ok"))
    started = time.monotonic()
    assert model.complete([Message("user", "Hi")]).text == "ok"
    assert time.monotonic() - started >= 0.4


def test_timeout(server: ScriptedServer) -> None:
    server.always(openai_answer("too late"), delay=2.0)
    chat = OpenAIChatModel(
        "m", base_url=server.url, timeout=0.2, max_retries=1, retry_initial_delay=0.01
    )
    started = time.monotonic()
    with chat, pytest.raises(ChatModelError, match=r"did not answer within 0.2s"):
        chat.complete([Message("user", "Hi")])
    assert time.monotonic() - started < 1.5
    assert len(server.requests) == 2


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chat = OpenAIChatModel(
        "m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, retry_initial_delay=0.01
    )
    with chat, pytest.raises(ChatModelError, match=r"could not reach .* check base_url"):
        chat.complete([Message("user", "Hi")])


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_names_the_setting_and_hides_the_key(
    server: ScriptedServer, model: OpenAIChatModel, caplog: pytest.LogCaptureFixture, status: int
) -> None:
    body = {"error": {"message": f"Incorrect API key provided: {API_KEY}", "code": "invalid"}}
    server.always(body, status=status)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ChatModelError, match=r"check the api key setting .llm\.api_key.") as info:
        model.complete([Message("user", "Hi")])
    assert API_KEY not in str(info.value)
    assert API_KEY not in caplog.text
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "error",
    [
        {
            "message": "Too long.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        },
        {
            "message": "This model's maximum context length is 4096 tokens. However, you requested "
            "5000 tokens.",
            "type": "BadRequestError",
            "code": 400,
        },
    ],
)
def test_context_length_is_not_retried(
    server: ScriptedServer, model: OpenAIChatModel, error: dict[str, Any]
) -> None:
    server.always({"error": error}, status=400)
    with pytest.raises(ContextLengthError, match="too long for the model's context window"):
        model.complete([Message("user", "x" * 100)])
    assert len(server.requests) == 1


def test_context_length_in_a_5xx_is_not_retried(
    server: ScriptedServer, model: OpenAIChatModel
) -> None:
    server.always({"error": "maximum context length exceeded"}, status=500)
    with pytest.raises(ContextLengthError):
        model.complete([Message("user", "x")])
    assert len(server.requests) == 1


def test_other_client_errors_are_not_retried(
    server: ScriptedServer, model: OpenAIChatModel
) -> None:
    server.always("model 'nope' not found", status=404)
    with pytest.raises(ChatModelError, match=r"HTTP 404.*check base_url and the model name"):
        model.complete([Message("user", "x")])
    assert len(server.requests) == 1


def test_non_json_success_body(server: ScriptedServer, model: OpenAIChatModel) -> None:
    server.answer("<html>proxy login</html>")
    with pytest.raises(ChatModelError, match="not a JSON object"):
        model.complete([Message("user", "x")])


def test_max_completion_tokens_field(server: ScriptedServer) -> None:
    server.answer(openai_answer("ok"))
    with OpenAIChatModel(
        "o3-mini", base_url=server.url, max_tokens_field="max_completion_tokens"
    ) as chat:
        chat.complete([Message("user", "x")], max_tokens=7)
    body = server.requests[0].body
    assert body["max_completion_tokens"] == 7
    assert "max_tokens" not in body


def test_context_window_defaults() -> None:
    assert OpenAIChatModel("gpt-4o-mini").context_window == 128_000
    assert OpenAIChatModel("openai/gpt-4.1").context_window == 1_047_576
    assert OpenAIChatModel("llama3.2").context_window == 8192
    assert OpenAIChatModel("llama3.2", context_window=32768).context_window == 32768


@pytest.mark.parametrize(
    "options",
    [
        {"base_url": "localhost:11434"},
        {"timeout": 0},
        {"max_retries": -1},
        {"structured_output": "xml"},
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        OpenAIChatModel("m", **options)


def test_repr_hides_the_key() -> None:
    chat = OpenAIChatModel("m", api_key=API_KEY)
    assert API_KEY not in repr(chat)
    assert API_KEY not in json.dumps(vars(chat), default=repr)
