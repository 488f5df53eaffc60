"""``MemoryToolkit``: memory as function tools a model can call.

``get_tools()`` returns ``FunctionTool`` values, each with a ``name``, a
``description``, JSON-schema ``parameters`` generated from a pydantic model, and
a callable. ``remember`` saves a fact (``Memory.save``), ``recall`` finds saved
facts (``Memory.recall``), ``forget`` retires one (``Memory.forget``); with an
agent memory attached, ``save_session`` and ``load_session`` persist and restore
its chat history. Tools return text written for the model; bad arguments and
memdir errors become ``ToolError`` with a message that says what to fix::

    toolkit = MemoryToolkit(memory, agent_memory)
    schemas = [tool.to_openai_schema() for tool in toolkit.get_tools()]
    text = toolkit.call("remember", '{"content": "The user prefers tea"}')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from memdir.llm import ToolSpec as LlmToolSpec
from memdir.memory import Memory
from memdir.tools import (
    MemoryForgetArgs,
    MemoryRecallArgs,
    MemorySaveArgs,
    ToolError,
    ToolHost,
    ToolSpec,
    fact_runners,
    parse_arguments,
)


class SessionStore(Protocol):
    """Anything whose chat history saves to and loads from a session (blocks and memories)."""

    def save(self, session_id: str | None = None) -> int: ...

    def load(self, session_id: str | None = None) -> int: ...


class SessionArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$",
        description="Session id: 1-128 letters, digits, '_' or '-', e.g. 'trip-planning'.",
    )


@dataclass(frozen=True)
class FunctionTool:
    """One tool: name, description, JSON-schema parameters and the function to run."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    func: Callable[..., str]

    def __call__(self, **arguments: Any) -> str:
        return self.func(**arguments)

    def call(self, arguments: str | Mapping[str, Any] | None = None) -> str:
        """Run with arguments as a model sent them: a JSON string or an object."""
        return self.func(**parse_arguments(arguments))

    def to_tool_spec(self) -> LlmToolSpec:
        """The tool as memdir chat models take it (``ChatModel.complete(tools=...)``)."""
        return LlmToolSpec(self.name, self.description, dict(self.parameters))

    def to_openai_schema(self) -> dict[str, Any]:
        """The OpenAI chat-completions function-calling form."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


REMEMBER = (
    "Remember one durable fact: a preference, decision, fact about the user or project, or "
    "context worth keeping. Write one short self-contained statement. It goes to today's daily "
    "note; a fact that updates an older one supersedes it."
)
RECALL = (
    "Recall saved facts relevant to a question, most relevant first, with their ids and dates. "
    "Pass as_of (ISO date or datetime) to see what was true then."
)
FORGET = (
    "Retire a saved fact that is wrong or no longer true, by fact_id (from recall) or by a "
    "query matching it. Always give the reason; the fact stays visible to recall with as_of."
)
SAVE_SESSION = "Save the current conversation under a session id so it can be loaded later."
LOAD_SESSION = "Replace the current conversation with the one saved under a session id."


class MemoryToolkit:
    """Function tools over ``memory`` (and over ``agent_memory``'s session, when given)."""

    def __init__(self, memory: Memory, agent_memory: SessionStore | None = None) -> None:
        self.memory = memory
        self.agent_memory = agent_memory

    def _specs(self) -> list[ToolSpec[Any]]:
        specs: list[ToolSpec[Any]] = [
            ToolSpec("remember", REMEMBER, MemorySaveArgs, fact_runners.run_save, read_only=False),
            ToolSpec("recall", RECALL, MemoryRecallArgs, fact_runners.run_recall),
            ToolSpec("forget", FORGET, MemoryForgetArgs, fact_runners.run_forget, read_only=False),
        ]
        if self.agent_memory is not None:
            specs += [
                ToolSpec("save_session", SAVE_SESSION, SessionArgs, self._save, read_only=False),
                ToolSpec("load_session", LOAD_SESSION, SessionArgs, self._load, read_only=False),
            ]
        return specs

    def _store(self) -> SessionStore:
        if self.agent_memory is None:
            raise ToolError("this toolkit has no agent memory; pass one to MemoryToolkit")
        return self.agent_memory

    def _save(self, memory: ToolHost, args: SessionArgs) -> str:
        added = self._store().save(args.session_id)
        return f"Saved the conversation to session {args.session_id!r} ({added} new message(s))."

    def _load(self, memory: ToolHost, args: SessionArgs) -> str:
        count = self._store().load(args.session_id)
        return f"Loaded {count} message(s) from session {args.session_id!r}."

    def get_tools(self) -> list[FunctionTool]:
        """The tools, each with its JSON schema and a callable taking keyword arguments."""
        return [self._tool(spec) for spec in self._specs()]

    def _tool(self, spec: ToolSpec[Any]) -> FunctionTool:
        def run(**arguments: Any) -> str:
            return spec.invoke(self.memory, arguments)

        run.__name__ = spec.name
        run.__doc__ = spec.description
        return FunctionTool(spec.name, spec.description, spec.input_schema(), run)

    def call(self, name: str, arguments: str | Mapping[str, Any] | None = None) -> str:
        """Run the tool ``name`` with a model's arguments; ``ToolError`` for an unknown name."""
        tools = {tool.name: tool for tool in self.get_tools()}
        if name not in tools:
            raise ToolError(f"unknown tool {name!r}; this toolkit has: {', '.join(tools)}")
        return tools[name].call(arguments)

    def openai_schemas(self) -> list[dict[str, Any]]:
        return [tool.to_openai_schema() for tool in self.get_tools()]
