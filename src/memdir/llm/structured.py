"""Structured output: ask for JSON matching a pydantic model, parse it tolerantly,
repair once, and fail with a clear ``StructuredOutputError``.

``complete_structured()`` has no side effects besides its (at most two) model
calls: the caller's messages are never modified. The schema it sends closes every
object (``additionalProperties: false``), so a server that constrains its output to
the schema (vLLM, llama.cpp, mistral.rs) ends the object after the fields asked for;
parsing stays tolerant of extra keys all the same.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, TypeVar

import pydantic

from memdir.errors import StructuredOutputError
from memdir.llm.base import ChatModel, Completion, Message

Model = TypeVar("Model", bound=pydantic.BaseModel)

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
_ERROR_LIMIT = 1500
_EXCERPT_LIMIT = 300


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model reply, or None.

    Tries, in order: the whole text; the contents of each code fence; the first
    balanced JSON object anywhere in the text (prose before and after is
    ignored, braces inside strings are respected).
    """
    stripped = text.strip()
    candidates = [stripped, *(block.strip() for block in _FENCE.findall(text))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return _first_embedded_object(text)


def _first_embedded_object(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def sent_schema(schema: type[pydantic.BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``schema`` as sent to a model: every object closed."""
    closed: dict[str, Any] = _closed(schema.model_json_schema())
    return closed


def _closed(node: Any) -> Any:
    if isinstance(node, dict):
        closed = {key: _closed(value) for key, value in node.items()}
        if closed.get("type") == "object" and "properties" in closed:
            closed.setdefault("additionalProperties", False)
        return closed
    if isinstance(node, list):
        return [_closed(item) for item in node]
    return node


def describe_schema(schema: type[pydantic.BaseModel]) -> str:
    """The instruction that asks for one JSON object matching ``schema``."""
    schema_json = json.dumps(sent_schema(schema), indent=None, sort_keys=True)
    return (
        "Reply with exactly one JSON object that matches this JSON schema, and nothing "
        "else: no prose, no code fences.\n"
        f"JSON schema: {schema_json}"
    )


def complete_structured(
    model: ChatModel,
    messages: Sequence[Message],
    schema: type[Model],
    *,
    max_tokens: int | None = None,
) -> Model:
    """Ask ``model`` for an instance of ``schema``; validate it; repair once.

    The JSON schema is passed to the provider (which enforces it where it can)
    and described in the system prompt. A reply that does not parse or validate
    gets one repair request showing the error; if that fails too,
    ``StructuredOutputError`` is raised. Other ``ChatModelError``s (including
    ``ContextLengthError``) pass through unchanged.
    """
    json_schema = sent_schema(schema)
    prompt = with_schema_instruction(messages, describe_schema(schema))
    first = model.complete(prompt, response_schema=json_schema, max_tokens=max_tokens)
    result = parse_structured(first.text, schema)
    if isinstance(result, pydantic.BaseModel):
        return result
    repair = [*prompt, Message("assistant", first.text), Message("user", repair_prompt(result))]
    second = model.complete(repair, response_schema=json_schema, max_tokens=max_tokens)
    retried = parse_structured(second.text, schema)
    if isinstance(retried, pydantic.BaseModel):
        return retried
    raise StructuredOutputError(_failure_message(model, schema, retried, second))


def with_schema_instruction(messages: Sequence[Message], instruction: str) -> list[Message]:
    """A copy of ``messages`` with ``instruction`` added to the first system message
    (or a new leading system message); local chat templates often accept only one."""
    copied = list(messages)
    for index, message in enumerate(copied):
        if message.role == "system":
            copied[index] = Message("system", f"{message.content}\n\n{instruction}")
            return copied
    return [Message("system", instruction), *copied]


def parse_structured(text: str, schema: type[Model]) -> Model | str:
    """The validated instance, or a description of what is wrong with ``text``."""
    data = extract_json_object(text)
    if data is None:
        return "the reply contains no JSON object"
    try:
        return schema.model_validate(data)
    except pydantic.ValidationError as exc:
        return f"the JSON does not match the schema: {_truncate(str(exc), _ERROR_LIMIT)}"


def repair_prompt(problem: str) -> str:
    return (
        f"Your previous reply could not be used: {problem}\n"
        "Reply again with only the corrected JSON object that matches the schema."
    )


def _failure_message(
    model: ChatModel, schema: type[pydantic.BaseModel], problem: str, last: Completion
) -> str:
    cut_off = (
        " The reply was cut off at the token limit; raise max_tokens."
        if last.finish_reason == "length"
        else ""
    )
    excerpt = _truncate(last.text, _EXCERPT_LIMIT)
    return (
        f"{model.provider} model {model.model!r} gave no valid {schema.__name__} "
        f"after one repair request: {problem}; last reply began {excerpt!r}.{cut_off} "
        "Try a stronger model, a simpler schema or a clearer prompt."
    )


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
