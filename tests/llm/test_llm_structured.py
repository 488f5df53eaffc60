"""Tolerant JSON extraction and complete_structured() over the scripted model."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.errors import ContextLengthError, StructuredOutputError
from memdir.llm import (
    Completion,
    Message,
    ScriptedChatModel,
    ToolSpec,
    complete_structured,
    extract_json_object,
)


class Entry(pydantic.BaseModel):
    should_update: bool
    daily_entry: str = ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  \n{"a": 1}\n ', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here it is:\n```\n{"a": [1, 2]}\n```\nHope that helps!', {"a": [1, 2]}),
        (
            'Sure! {"a": "curly } brace", "b": {"c": null}} -- done',
            {"a": "curly } brace", "b": {"c": None}},
        ),
        ('Use {braces} like {"x": true} here', {"x": True}),
        ('{"first": 1} and {"second": 2}', {"first": 1}),
        ('{"escaped": "say \\"hi\\" {"}', {"escaped": 'say "hi" {'}),
    ],
)
def test_extract_json_object(text: str, expected: dict[str, Any]) -> None:
    assert extract_json_object(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", "[1, 2, 3]", '{"a": 1', "{'a': 1}", "42"])
def test_extract_json_object_finds_nothing(text: str) -> None:
    assert extract_json_object(text) is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)
objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
prose = st.text(max_size=30).filter(lambda s: "{" not in s and "`" not in s)


@given(
    obj=objects,
    before=prose,
    after=st.text(max_size=30).filter(lambda s: "`" not in s),
    indent=st.sampled_from([None, 2]),
)
def test_extract_finds_an_object_wrapped_in_prose(
    obj: dict[str, Any], before: str, after: str, indent: int | None
) -> None:
    text = before + json.dumps(obj, indent=indent) + after
    assert extract_json_object(text) == obj


@given(obj=objects, before=prose, after=prose, lang=st.sampled_from(["", "json", "JSON"]))
def test_extract_finds_an_object_in_a_fence(
    obj: dict[str, Any], before: str, after: str, lang: str
) -> None:
    text = f"{before}\n```{lang}\n{json.dumps(obj)}\n```\n{after}"
    assert extract_json_object(text) == obj


@given(st.text(max_size=200))
def test_extract_never_raises(text: str) -> None:
    result = extract_json_object(text)
    assert result is None or isinstance(result, dict)


def test_valid_first_reply_needs_one_call() -> None:
    model = ScriptedChatModel(['{"should_update": true, "daily_entry": "met Bo"}'])
    messages = [Message("system", "You curate memory."), Message("user", "transcript")]
    before = list(messages)
    entry = complete_structured(model, messages, Entry, max_tokens=300)
    assert entry == Entry(should_update=True, daily_entry="met Bo")
    assert messages == before
    (call,) = model.calls
    assert call.response_schema == {**Entry.model_json_schema(), "additionalProperties": False}
    assert call.max_tokens == 300
    assert len(call.messages) == 2
    assert call.messages[0].content.startswith("You curate memory.\n\n")
    assert '"should_update"' in call.messages[0].content


def test_system_message_is_added_when_missing() -> None:
    model = ScriptedChatModel(['{"should_update": false}'])
    complete_structured(model, [Message("user", "transcript")], Entry)
    roles = [m.role for m in model.calls[0].messages]
    assert roles == ["system", "user"]


def test_repair_shows_the_validation_error_and_bad_output() -> None:
    model = ScriptedChatModel(['{"should_update": "perhaps"}', '{"should_update": false}'])
    entry = complete_structured(model, [Message("user", "transcript")], Entry)
    assert entry.should_update is False
    repair = model.calls[1].messages
    assert repair[-2] == Message("assistant", '{"should_update": "perhaps"}')
    assert repair[-1].role == "user"
    assert "should_update" in repair[-1].content
    assert "bool" in repair[-1].content


def test_failure_after_repair_is_a_clear_error() -> None:
    model = ScriptedChatModel(["I cannot do that.", "Still no."])
    with pytest.raises(StructuredOutputError) as info:
        complete_structured(model, [Message("user", "transcript")], Entry)
    message = str(info.value)
    assert "scripted model 'scripted' gave no valid Entry after one repair request" in message
    assert "no JSON object" in message
    assert "'Still no.'" in message
    assert len(model.calls) == 2


def test_truncated_reply_suggests_more_tokens() -> None:
    cut = Completion('{"should_update": tr', finish_reason="length")
    model = ScriptedChatModel([cut, cut])
    with pytest.raises(StructuredOutputError, match="raise max_tokens"):
        complete_structured(model, [Message("user", "x")], Entry)


def test_model_errors_pass_through_without_repair() -> None:
    model = ScriptedChatModel([ContextLengthError("too long")])
    with pytest.raises(ContextLengthError):
        complete_structured(model, [Message("user", "x")], Entry)
    assert len(model.calls) == 1


def test_function_model_sees_the_schema() -> None:
    def answer(
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        schema: Mapping[str, Any] | None,
    ) -> str:
        assert schema is not None
        return json.dumps({name: False for name in schema["required"]})

    entry = complete_structured(ScriptedChatModel(answer), [Message("user", "x")], Entry)
    assert entry == Entry(should_update=False)


def test_the_schema_sent_closes_every_object_but_parsing_stays_tolerant() -> None:
    class Item(pydantic.BaseModel):
        text: str

    class Listing(pydantic.BaseModel):
        items: list[Item]

    from memdir.llm.structured import parse_structured, sent_schema

    schema = sent_schema(Listing)
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["Item"]["additionalProperties"] is False
    assert "additionalProperties" not in Listing.model_json_schema()  # the model's own is kept
    parsed = parse_structured('{"items": [{"text": "a", "extra": 1}], "more": 2}', Listing)
    assert parsed == Listing(items=[Item(text="a")])
