"""The REST app: ``/api/v1`` routes, MCP streamable HTTP at ``/mcp``, token auth.

``create_app(home)`` builds it; ``serve`` runs it under uvicorn. ``GET /health``,
``GET /openapi.json`` and the interactive API docs at ``/docs`` (Swagger UI, its
assets served from the ``fastapi-offline`` package, no CDN) are public: they
describe the API and hold no memory. Everything else needs a bearer token: the
admin token from ``$MEMDIR_HOME/api-token`` or one from ``memdir token create``
(an agent's token acts on that agent's workspace only, ``binding.py``); the
OpenAPI document declares that scheme, so the docs' "Authorize" button and
generated clients know about it.

A request passes, outermost first: the Host check (loopback binds), the browser's
public pages, the bearer auth, the agent binding (and the lease of the agent's
``Memory``), the body limit, then a route or ``/mcp`` (where each session is bound
to its token and agent and the sessions of a token are capped, ``sessions.py``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import Route

from memdir.access import AccessTokens, Principal
from memdir.config import ServerSettings, resolve_home
from memdir.interfaces.http.agent_routes import router as agent_router
from memdir.interfaces.http.auth import (
    PRINCIPAL,
    BearerAuth,
    BodyLimit,
    HostCheck,
    fixed_token_check,
    load_or_create_token,
)
from memdir.interfaces.http.binding import AgentBinding
from memdir.interfaces.http.browser import mount_browser
from memdir.interfaces.http.fact_routes import router as fact_router
from memdir.interfaces.http.file_routes import router as file_router
from memdir.interfaces.http.history import router as history_router
from memdir.interfaces.http.mcp_endpoint import McpEndpoint
from memdir.interfaces.http.mem0 import router as mem0_router
from memdir.interfaces.http.memories import AgentMemories, MemoryOpener
from memdir.interfaces.http.problems import PROBLEM_RESPONSES, install_problem_handlers
from memdir.interfaces.http.routes import router
from memdir.interfaces.http.sessions import McpSessions
from memdir.interfaces.http.trace_routes import router as trace_router
from memdir.interfaces.http.transcripts import router as transcripts_router
from memdir.interfaces.mcp import build_server
from memdir.memory import Memory
from memdir.version import __version__

MAX_BODY_BYTES = 8 * 1024 * 1024
DOCS_URL = "/docs"
BEARER_SCHEME = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "The token in $MEMDIR_HOME/api-token (created by the first run).",
    }
}
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class ServerLimits:
    """What one server holds at most: open workspaces, MCP sessions per token, idle time."""

    max_open_workspaces: int = 32
    mcp_sessions_per_token: int = 16
    mcp_idle_seconds: float = 300.0

    @classmethod
    def from_settings(cls, server: ServerSettings) -> ServerLimits:
        return cls(
            server.max_open_workspaces, server.mcp_sessions_per_token, server.mcp_idle_seconds
        )


def _mcp_security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for the MCP endpoint when bound to loopback."""
    if host not in LOOPBACK_HOSTS:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
        allowed_origins=[
            "http://127.0.0.1:*",
            "http://localhost:*",
            "http://[::1]:*",
            "http://127.0.0.1",
            "http://localhost",
            "http://[::1]",
        ],
    )


def create_app(
    home: str | os.PathLike[str] | None = None,
    *,
    agent: str | None = None,
    open_memory: MemoryOpener | None = None,
    token: str | None = None,
    host: str = "127.0.0.1",
    max_body_bytes: int = MAX_BODY_BYTES,
    limits: ServerLimits | None = None,
) -> FastAPI:
    """The ASGI app serving the memory under ``home``.

    ``agent`` is the default agent when an admin request names none; ``open_memory``
    opens the ``Memory`` of an agent id (default ``Memory.open(home, agent_id)``;
    the CLI passes one that honours ``--set``; tests pass a hash embedder).
    ``token`` is accepted as an admin token besides the home's own (``api-token``
    and ``tokens.json``, read again when they change). ``limits`` bound the open
    workspaces and the MCP sessions (default: ``ServerLimits()``).
    """
    home_path = resolve_home(home)
    limits = limits or ServerLimits()
    opener = open_memory or (lambda agent_id: Memory.open(home_path, agent_id))
    memories = AgentMemories(opener, default_agent=agent, max_open=limits.max_open_workspaces)
    mcp_server = build_server(memories.get)  # AgentBinding leases the agent for each POST
    sessions = StreamableHTTPSessionManager(
        app=mcp_server,
        security_settings=_mcp_security(host),
        session_idle_timeout=limits.mcp_idle_seconds,
    )
    if not token:
        load_or_create_token(home_path)  # the admin token of a home that has none yet
    tokens = AccessTokens(home_path)
    check = fixed_token_check(token, tokens.verify) if token else tokens.verify
    mcp_sessions = McpSessions(
        StreamableHTTPASGIApp(sessions),
        per_token=limits.mcp_sessions_per_token,
        idle_seconds=limits.mcp_idle_seconds,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with sessions.run():
            try:
                yield
            finally:
                memories.close()

    app = FastAPIOffline(
        title="memdir",
        version=__version__,
        summary="Persistent, searchable, self-curating memory for AI agents, kept as Markdown.",
        lifespan=lifespan,
        docs_url=DOCS_URL,
        redoc_url=None,
        static_url=f"{DOCS_URL}/assets",
        swagger_ui_parameters={"persistAuthorization": True},
    )
    app.state.memories = memories
    app.state.home = home_path
    app.state.tokens = tokens
    app.state.mcp_sessions = mcp_sessions
    install_problem_handlers(app)
    app.include_router(router)
    app.include_router(mem0_router)
    app.include_router(file_router)
    app.include_router(transcripts_router)
    app.include_router(history_router)
    app.include_router(trace_router)
    app.include_router(agent_router)
    app.router.routes.append(Route("/mcp", endpoint=McpEndpoint(mcp_sessions)))

    @app.get("/health", tags=["health"])
    def health() -> dict[str, str]:
        """Liveness check; needs no token."""
        return {"status": "ok", "version": __version__}

    @app.get("/api/v1/access", tags=["access"])
    def access(request: Request) -> dict[str, Any]:
        """Whom the bearer token stands for: its id, and its agent (``null``: the admin,
        who may act on every agent and the global workspace)."""
        principal: Principal = request.scope[PRINCIPAL]
        return {"token": principal.token_id, "agent": principal.agent, "admin": principal.is_admin}

    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(AgentBinding, memories=memories)
    app.add_middleware(BearerAuth, check=check)
    mount_browser(app)  # after the auth: the page at / and /static/ needs no token
    app.include_router(fact_router)  # last: /facts/recall, /facts/timeline are no fact ids
    if host in LOOPBACK_HOSTS:  # outermost: a rebound name gets nothing, not even the page
        app.add_middleware(HostCheck, hosts=LOOPBACK_HOSTS)
    document_problems(app)
    return app


def document_problems(app: FastAPI) -> None:
    """Declare the problem JSON answers and the bearer scheme on every ``/api/`` operation.

    Routes added by other modules (the browser's timeline) get them too, and
    FastAPI's default 422 (``application/json``) is replaced by the problem JSON
    the server really sends, so a client generated from the spec knows every
    status and body it can receive, and that it must send the token.
    """
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()
        schema.setdefault("components", {})["securitySchemes"] = BEARER_SCHEME
        for path, item in schema.get("paths", {}).items():
            for operation in item.values():
                if not path.startswith("/api/"):
                    operation["security"] = []  # public: /health
                    continue
                operation["security"] = [{"bearer": []}]
                responses = operation.setdefault("responses", {})
                responses.update({str(code): body for code, body in PROBLEM_RESPONSES.items()})
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
