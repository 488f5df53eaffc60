"""The MCP server: the memory tools and bootstrap-file resources over stdio or HTTP.

``run_stdio(memory)`` serves one ``Memory`` on stdin/stdout (``memdir mcp``);
``build_server(resolve)`` returns the low-level server that the REST app mounts
under ``/mcp`` for streamable HTTP (``memdir serve``). ``python -m
memdir.interfaces.mcp --home DIR [--agent ID]`` runs the stdio server directly.
"""

from __future__ import annotations

from memdir.interfaces.mcp.server import (
    RESOURCE_FILES,
    build_server,
    resource_uri,
    run_stdio,
)

__all__ = ["RESOURCE_FILES", "build_server", "resource_uri", "run_stdio"]
