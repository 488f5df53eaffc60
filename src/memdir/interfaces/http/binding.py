"""Bind each request to the one workspace its token may act on, before any route or tool.

``AgentBinding`` sits right after the bearer auth. For every authenticated request
it works out the agent the request acts as (``memdir.access.bind_agent``: an agent
token always its own, the admin token the ``?agent=`` it names or the server's
default), refuses a request that names another agent or an admin-only switch with
403 problem JSON, and then rewrites the query so that every route and MCP tool
sees exactly that agent: ``?agent=`` is replaced by the bound one. Routes and tools
never see an agent the token may not use, and an agent token's request without
``?agent=`` acts on its own workspace, not the server's default.

It also leases that agent's ``Memory`` from the server's ``AgentMemories`` for the
whole request, so the bounded cache never closes a workspace under a running
request (a GET of ``/mcp``, a long-lived event stream, leases nothing).
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qsl, urlencode

import anyio
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from memdir.access import Principal, bind_agent, bind_path_agent, require_admin
from memdir.errors import MemdirError
from memdir.interfaces.http.auth import PRINCIPAL
from memdir.interfaces.http.memories import AgentMemories
from memdir.interfaces.http.problems import problem_for
from memdir.memory.proposals import acting_for_agent

log = logging.getLogger(__name__)

AGENT = "memdir.agent"  # the ASGI scope key of the agent a request is bound to
CURATION_PREFIX = "/api/v1/memory/"  # /api/v1/memory/{agent}/...: the agent is in the path
ADMIN_SWITCHES = {"all_agents": "all_agents=true (syncing every agent's workspace)"}


class AgentBinding:
    """Binds an authenticated request to one agent and leases its ``Memory`` meanwhile."""

    def __init__(self, app: ASGIApp, memories: AgentMemories) -> None:
        self.app = app
        self.memories = memories

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get(PRINCIPAL)
        if scope["type"] != "http" or not isinstance(principal, Principal):
            await self.app(scope, receive, send)
            return
        try:
            agent, query = self._bind(principal, scope)
        except MemdirError as exc:
            await problem_for(exc, scope.get("path"))(scope, receive, send)
            return
        scope = {**scope, "query_string": query, AGENT: agent}
        if not _leases(scope):
            await self.app(scope, receive, send)
            return
        try:
            await anyio.to_thread.run_sync(self.memories.acquire, agent)
        except MemdirError as exc:  # an invalid agent id, a configuration that fails
            await problem_for(exc, scope.get("path"))(scope, receive, send)
            return
        try:
            if principal.is_admin:
                await self.app(scope, receive, send)
            else:  # an agent's token: a shared file's change becomes a proposal
                with acting_for_agent():
                    await self.app(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.memories.release, agent)

    def _bind(self, principal: Principal, scope: Scope) -> tuple[str | None, bytes]:
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        for name, value in pairs:
            if name in ADMIN_SWITCHES and value.lower() not in ("", "false", "0", "no", "off"):
                require_admin(principal, ADMIN_SWITCHES[name])
        requested = [value for name, value in pairs if name == "agent"]
        agent = bind_agent(principal, requested, self.memories.default_agent)
        path = scope.get("path", "")
        if path.startswith(CURATION_PREFIX):
            in_path = path[len(CURATION_PREFIX) :].split("/", 1)[0]
            if in_path:
                agent = bind_path_agent(principal, in_path)
        kept = [(name, value) for name, value in pairs if name != "agent"]
        if agent is not None:
            kept.append(("agent", agent))
        return agent, urlencode(kept).encode("latin-1")


def _leases(scope: Scope) -> bool:
    """Whether the request works with memory while it lasts (an MCP GET is a stream)."""
    return not (scope.get("path") == "/mcp" and scope.get("method") != "POST")


def visible_agents(request: Request, agents: list[str]) -> list[str]:
    """The agent ids a request may see: all for the admin, its own for an agent's token."""
    principal = request.scope.get(PRINCIPAL)
    if not isinstance(principal, Principal) or principal.is_admin:
        return agents
    return [agent for agent in agents if agent == principal.agent] or [str(principal.agent)]
