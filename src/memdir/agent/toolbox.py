"""The memory tools as function calls: specs for the model, runs for its calls.

The specs are rendered from ``memdir.tools.TOOLS``, the one definition the MCP
server and ``openai_tool_schemas()`` / ``anthropic_tool_schemas()`` use too, so
the chat agent can never offer a model a different tool than the other edges.
A failed call is answered to the model as an error text and recorded in
``learnings/errors.md``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memdir.curate import record_tool_error
from memdir.llm import ToolCall, ToolSpec
from memdir.tools import TOOLS, ToolError, call_tool

if TYPE_CHECKING:
    from memdir.memory import Memory

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolRun:
    """One tool call the model made and what it got back."""

    call: ToolCall
    result: str
    ok: bool


def chat_tool_specs() -> tuple[ToolSpec, ...]:
    """The memory tools as ``ToolSpec`` values for ``ChatModel.complete(tools=...)``."""
    return tuple(
        ToolSpec(name=tool.name, description=tool.description, parameters=tool.input_schema())
        for tool in TOOLS
    )


def run_tool_call(memory: Memory, call: ToolCall, context: str = "") -> ToolRun:
    """Run one call; a ``ToolError`` becomes an error result and a learning.

    ``context`` (what the user asked) goes into the learning so the lesson can
    be understood later.
    """
    try:
        result = call_tool(memory, call.name, call.arguments)
    except ToolError as exc:
        logger.info("tool %s failed: %s", call.name, exc)
        name = call.name.strip() or "(no tool name)"
        record_tool_error(memory.workspace, name, call.arguments, str(exc), context)
        return ToolRun(call, f"Error: {exc}", ok=False)
    return ToolRun(call, result, ok=True)
