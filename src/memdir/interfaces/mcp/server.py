"""Build the MCP server from ``memdir.tools`` and run it over stdio.

The handlers are async (the SDK's contract); every call into ``Memory`` runs in a
worker thread so the event loop never blocks on files or SQLite. Tool failures
come back as MCP tool errors (``isError``), never as a crash of the server.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from memdir.errors import MemdirError, NotFoundError
from memdir.history import attributed
from memdir.interfaces.http.auth import PRINCIPAL
from memdir.tools import TOOL_STEP_NAMES, TOOLS, ToolError, ToolResult, call_tool_result
from memdir.version import __version__

if TYPE_CHECKING:
    from memdir.memory import Memory

log = logging.getLogger(__name__)

MemoryResolver = Callable[[str | None], "Memory"]
"""Returns the ``Memory`` of an agent id (``None``: the server's default workspace)."""

RESOURCE_FILES = (
    "AGENTS.md",
    "SOUL.md",
    "IDENTITY.md",
    "USER.md",
    "TOOLS.md",
    "HEARTBEAT.md",
    "MEMORY.md",
    "BOOTSTRAP.md",
)
URI_PREFIX = "memdir://workspace/"
RESOURCE_NOT_FOUND = -32002
SYSTEM_PROMPT = "system_prompt"
INSTRUCTIONS = (
    "Persistent memory kept as Markdown. Search it (memory_search) before answering "
    "anything about the past; save durable facts with memory_save; cite hits as "
    "path:start-end, exactly as memory_search gives them (a file outside your own workspace "
    "is cited 'global:<path>' or 'agent:<id>:<path>', and memory_get reads that path). The "
    "top hit's score is the confidence that memory holds something relevant; when the "
    "search finds nothing relevant, say so instead of guessing. The bootstrap files are "
    "resources under memdir://workspace/, and "
    "the prompt 'system_prompt' assembles them (session_kind: private, group or shared). "
    "If memdir://workspace/BOOTSTRAP.md exists, this is the first run: follow it, then "
    "call memory_finish_ritual."
)
PROMPT_ARGUMENTS = [
    types.PromptArgument(
        name="session_kind",
        description="private (default: you and your human), group or shared: the latter "
        "two leave MEMORY.md, the facts and private details out.",
        required=False,
    )
]


def resource_uri(path: str) -> str:
    """The MCP resource URI of a workspace file: ``memdir://workspace/MEMORY.md``."""
    return URI_PREFIX + path


def _tool_list() -> list[types.Tool]:
    return [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.input_schema(),
            output_schema=tool.output_schema(),
            annotations=types.ToolAnnotations(
                read_only_hint=tool.read_only,
                destructive_hint=None if tool.read_only else tool.destructive,
                idempotent_hint=None if tool.read_only else tool.idempotent,
                open_world_hint=False,
            ),
        )
        for tool in TOOLS
    ]


def _agent_of(ctx: Any) -> str | None:
    """The ``agent`` query parameter of the HTTP request carrying this message, if any."""
    request = getattr(ctx, "request", None)
    params = getattr(request, "query_params", None)
    return None if params is None else params.get("agent") or None


def _who(ctx: Any) -> dict[str, str | None]:
    """Who calls (for the history): the token of the HTTP request and the MCP session."""
    request = getattr(ctx, "request", None)
    principal = getattr(request, "scope", {}).get(PRINCIPAL) if request is not None else None
    headers = getattr(request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    return {"token": getattr(principal, "token_id", None), "session": session}


def _attributed_call(
    who: dict[str, str | None], memory: Memory, name: str, arguments: dict[str, Any]
) -> ToolResult:
    with attributed(**who):
        return call_tool_result(memory, name, arguments)


def _text_result(
    text: str, is_error: bool = False, data: dict[str, Any] | None = None
) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=data,
        is_error=is_error,
    )


def build_server(resolve: MemoryResolver, name: str = "memdir") -> Server[Any]:
    """The low-level MCP server: the memory tools and the bootstrap-file resources."""

    async def memory_for(ctx: Any) -> Memory:
        return await anyio.to_thread.run_sync(resolve, _agent_of(ctx))

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_tool_list())

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            memory = await memory_for(ctx)
            result = await anyio.to_thread.run_sync(
                _attributed_call, _who(ctx), memory, params.name, params.arguments or {}
            )
        except (ToolError, MemdirError) as exc:
            log.info("tool %s failed: %s", params.name, exc)
            return _text_result(exc.describe(TOOL_STEP_NAMES), is_error=True)
        except Exception:  # boundary: one tool call must never take the server down
            log.exception("tool %s raised an unexpected error", params.name)
            return _text_result(
                f"{params.name} failed with an internal error; see the memdir server log",
                is_error=True,
            )
        return _text_result(result.text, data=result.data)

    async def list_prompts(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompt = types.Prompt(
            name=SYSTEM_PROMPT,
            description="The system prompt memdir assembles from the workspace: bootstrap "
            "files, recent daily notes, learnings, facts and skills.",
            arguments=PROMPT_ARGUMENTS,
        )
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != SYSTEM_PROMPT:
            raise MCPError(
                types.INVALID_PARAMS, f"unknown prompt {params.name!r}; use {SYSTEM_PROMPT!r}"
            )
        kind = (params.arguments or {}).get("session_kind") or None
        memory = await memory_for(ctx)
        try:
            text = await anyio.to_thread.run_sync(
                functools.partial(memory.system_prompt, session_kind=kind)
            )
        except MemdirError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.describe(TOOL_STEP_NAMES)) from exc
        content = types.TextContent(type="text", text=text)
        return types.GetPromptResult(
            description=f"memdir system prompt ({kind or 'default'} session)",
            messages=[types.PromptMessage(role="user", content=content)],
        )

    async def list_resources(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        memory = await memory_for(ctx)
        present = set(await anyio.to_thread.run_sync(memory.list_files, ""))
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name=path,
                    uri=resource_uri(path),
                    description=f"{path} of the memory workspace",
                    mime_type="text/markdown",
                )
                for path in RESOURCE_FILES
                if path in present
            ]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if not uri.startswith(URI_PREFIX):
            raise MCPError(RESOURCE_NOT_FOUND, f"unknown resource {uri!r}; use {URI_PREFIX}<path>")
        memory = await memory_for(ctx)
        try:
            text = await anyio.to_thread.run_sync(memory.read_file, uri[len(URI_PREFIX) :])
        except NotFoundError as exc:
            raise MCPError(RESOURCE_NOT_FOUND, exc.describe(TOOL_STEP_NAMES)) from exc
        except MemdirError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.describe(TOOL_STEP_NAMES)) from exc
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    return Server(
        name,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


async def serve_stdio(memory: Memory) -> None:
    """Serve ``memory`` over this process's stdin and stdout until the client leaves."""
    server = build_server(lambda _agent: memory)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(memory: Memory) -> None:
    """Blocking entry point of ``memdir mcp``: seed the workspace (only missing files),
    then serve ``memory`` over stdio."""
    memory.init()
    anyio.run(serve_stdio, memory)
