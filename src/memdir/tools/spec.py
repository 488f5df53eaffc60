"""``ToolSpec``: one agent tool, defined once; ``ToolResult`` and ``ToolError``.

A tool has a name, a description written for a model, an argument model (pydantic, whose
JSON schema is the tool's input schema), a runner and, for some, an output model (the
MCP ``outputSchema`` of its structured result). ``invoke`` validates the arguments and
runs the tool; bad arguments and every ``MemdirError`` become a ``ToolError`` whose
message says what went wrong and what to do next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from memdir.errors import MemdirError
from memdir.history import attributed
from memdir.tools.host import ToolHost

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class ToolError(MemdirError):
    """A tool call failed; the message is meant for the agent that made the call."""


TOOL_STEP_NAMES = {
    "list_files": "memory_list_files",
    "read_file": "memory_read_file",
    "write_file": "memory_write_file",
    "recall": "memory_recall (or memory_list_facts)",
    "replace_all": "pass replace_all=true",
    "list_sessions": "the session list of the memdir CLI (`memdir session list`)",
    "reread": "memory_read_file (its sha256 is the new expected_sha256)",
}
"""How the tools name each next step an error can point to (``memdir.errors.Action``)."""


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns: text for the model and, for some tools, structured data
    (MCP ``structuredContent``, shaped by the tool's ``output_model``)."""

    text: str
    data: dict[str, Any] | None = None


@dataclass(frozen=True)
class ToolSpec(Generic[ArgsT]):
    """One agent tool: what it is called, when to use it, what it takes, what it does.

    ``run`` returns the text for the model, or a ``ToolResult`` that carries
    structured data too (then ``output_model`` describes that data).
    """

    name: str
    description: str
    args_model: type[ArgsT]
    run: Callable[[ToolHost, ArgsT], str | ToolResult]
    read_only: bool = True
    output_model: type[BaseModel] | None = None
    destructive: bool = False  # may change or hide what is stored (not only add to it)
    idempotent: bool = False  # calling again with the same arguments changes nothing more

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (pydantic titles stripped)."""
        schema: dict[str, Any] = _strip_titles(self.args_model.model_json_schema())
        return schema

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON schema of the structured result, or None for a text-only tool."""
        if self.output_model is None:
            return None
        schema: dict[str, Any] = _strip_titles(self.output_model.model_json_schema())
        return schema

    def invoke(self, memory: ToolHost, arguments: Mapping[str, Any]) -> str:
        """Validate ``arguments`` and run the tool; failures become ``ToolError``."""
        return self.invoke_result(memory, arguments).text

    def invoke_result(self, memory: ToolHost, arguments: Mapping[str, Any]) -> ToolResult:
        """Like ``invoke``, with the structured data when the tool has any."""
        try:
            args = self.args_model.model_validate(dict(arguments))
        except ValidationError as exc:
            raise ToolError(_validation_message(self.name, exc)) from exc
        try:
            with attributed(tool=self.name, reason=getattr(args, "reason", None)):
                result = self.run(memory, args)
        except MemdirError as exc:
            raise ToolError(f"{self.name} failed: {exc.describe(TOOL_STEP_NAMES)}") from exc
        return result if isinstance(result, ToolResult) else ToolResult(result)


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            key: _strip_titles(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(item) for item in schema]
    return schema


def _validation_message(name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return f"invalid arguments for {name}: " + "; ".join(problems) + "; fix them and call again"
