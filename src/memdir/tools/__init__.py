"""memdir.tools: the agent tools, defined once.

``spec`` (``ToolSpec``, ``ToolResult``, ``ToolError``), ``args`` (argument models),
``outputs`` (structured results), ``render`` (text for an agent), ``runners`` (call the
host, render) and ``catalog`` (``TOOLS`` and how an edge runs and lists them). The tools
run against a ``ToolHost`` (``host``), which ``memdir.memory.Memory`` is:

    from memdir.tools import call_tool
    text = call_tool(memory, "memory_search", {"query": "database decision"})

Bad arguments and every ``MemdirError`` become a ``ToolError`` whose message says
what went wrong and what to do next; nothing else is caught.
"""

from __future__ import annotations

from memdir.tools.args import (
    MAX_CONTENT_CHARS,
    MemoryForgetArgs,
    MemoryRecallArgs,
    MemorySaveArgs,
    MemorySearchArgs,
    iso_moment,
)
from memdir.tools.catalog import (
    TOOLS,
    TOOLS_BY_NAME,
    anthropic_tool_schemas,
    call_tool,
    call_tool_result,
    find_tool,
    openai_tool_schemas,
    parse_arguments,
)
from memdir.tools.host import Scope, ToolHost
from memdir.tools.outputs import HitOutput, SearchOutput, SliceOutput
from memdir.tools.render import (
    RESULTS_CLOSE,
    RESULTS_OPEN,
    render_fact,
    render_fact_list,
    render_forget,
    render_recall,
    render_recent,
    render_save,
    render_search,
)
from memdir.tools.spec import TOOL_STEP_NAMES, ToolError, ToolResult, ToolSpec

TOOL_NAMES = tuple(tool.name for tool in TOOLS)
"""The names of the memory tools, in order (the system prompt lists them)."""

__all__ = [
    "MAX_CONTENT_CHARS",
    "RESULTS_CLOSE",
    "RESULTS_OPEN",
    "TOOLS",
    "TOOLS_BY_NAME",
    "TOOL_NAMES",
    "TOOL_STEP_NAMES",
    "HitOutput",
    "MemoryForgetArgs",
    "MemoryRecallArgs",
    "MemorySaveArgs",
    "MemorySearchArgs",
    "Scope",
    "SearchOutput",
    "SliceOutput",
    "ToolError",
    "ToolHost",
    "ToolResult",
    "ToolSpec",
    "anthropic_tool_schemas",
    "call_tool",
    "call_tool_result",
    "find_tool",
    "iso_moment",
    "openai_tool_schemas",
    "parse_arguments",
    "render_fact",
    "render_fact_list",
    "render_forget",
    "render_recall",
    "render_recent",
    "render_save",
    "render_search",
]
