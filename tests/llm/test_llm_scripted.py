"""The scripted chat model that ships as a test double."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from memdir.errors import ChatModelError, ContextLengthError, InvalidInputError
from memdir.llm import (
    ChatModel,
    Completion,
    Message,
    ScriptedChatModel,
    ToolCall,
    ToolSpec,
)


def test_canned_replies_in_order_and_calls_recorded() -> None:
    call = ToolCall("c1", "memory_save", {"content": "likes tea"})
    model = ScriptedChatModel(
        ["first", Completion("", tool_calls=(call,), finish_reason="tool_calls")]
    )
    tool = ToolSpec("memory_save", "Save a fact")
    first = model.complete([Message("user", "hi")], max_tokens=5)
    second = model.complete([Message("user", "save it")], tools=[tool], response_schema={"a": 1})
    assert first == Completion("first", finish_reason="stop")
    assert second.tool_calls == (call,)
    assert model.remaining == 0
    assert [c.messages[0].content for c in model.calls] == ["hi", "save it"]
    assert model.calls[0].max_tokens == 5
    assert model.calls[0].tools is None
    assert model.calls[1].tools == (tool,)
    assert model.calls[1].response_schema == {"a": 1}


def test_running_out_of_replies_is_an_error() -> None:
    model = ScriptedChatModel(["only"])
    model.complete([Message("user", "1")])
    with pytest.raises(ChatModelError, match="ran out of replies after 1 calls"):
        model.complete([Message("user", "2")])


def test_canned_errors_are_raised() -> None:
    model = ScriptedChatModel([ContextLengthError("window exceeded"), "after compaction"])
    with pytest.raises(ContextLengthError, match="window exceeded"):
        model.complete([Message("user", "long")])
    assert model.complete([Message("user", "short")]).text == "after compaction"


def test_function_driven() -> None:
    def echo(
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        schema: Mapping[str, Any] | None,
    ) -> str:
        return f"{len(messages)} messages, tools={tools is not None}, schema={schema is not None}"

    model = ScriptedChatModel(echo, model="echo", context_window=100)
    assert model.complete([Message("user", "a"), Message("user", "b")]).text == (
        "2 messages, tools=False, schema=False"
    )
    assert (model.provider, model.model, model.context_window) == ("scripted", "echo", 100)
    assert len(model.calls) == 1


def test_function_may_call_the_model_again() -> None:
    model: ScriptedChatModel

    def nested(messages: Sequence[Message], *_: object) -> str:
        if len(model.calls) == 1:
            return "inner:" + model.complete([Message("user", "inner")]).text
        return "leaf"

    model = ScriptedChatModel(nested)
    assert model.complete([Message("user", "outer")]).text == "inner:leaf"


def test_is_a_chat_model_and_thread_safe() -> None:
    model = ScriptedChatModel([str(i) for i in range(200)])
    assert isinstance(model, ChatModel)
    answers: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            text = model.complete([Message("user", "x")]).text
            with lock:
                answers.append(text)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers, key=int) == [str(i) for i in range(200)]
    assert len(model.calls) == 200


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"role": "robot", "content": "x"}, "role 'robot'"),
        ({"role": "user", "content": 3}, "content must be a string"),
        ({"role": "tool", "content": "x"}, "tool_call_id"),
        ({"role": "user", "content": "x", "tool_calls": (ToolCall("1", "f"),)}, "only assistant"),
    ],
)
def test_invalid_messages(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        Message(**kwargs)
