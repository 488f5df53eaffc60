"""MCP sessions over HTTP, each bound to the token and the agent that opened it, and capped.

The MCP SDK keeps a session per ``Mcp-Session-Id``; by itself it would let a
request of one token continue another token's session, and ask a session opened
as alice to act as bob on its next request (the agent comes from each request's
``?agent=``). ``McpSessions`` wraps the SDK's endpoint:

* a new session records the token and the agent its opening request was bound to
  (``AgentBinding`` bound it); a later request of that session with another token
  or for another agent is refused with 403 problem JSON that says to open a new
  session; the SDK is told the same owner (``scope["user"]``), so it refuses too;
* a token may hold ``per_token`` sessions at once: one more is refused with 429
  and ``Retry-After`` (close one with ``DELETE /mcp``, or let one go idle);
* sessions idle for ``idle_seconds`` are closed by the SDK (``session_idle_timeout``);
  this table forgets them on the same clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memdir.access import Principal
from memdir.interfaces.http.auth import PRINCIPAL, send_problem
from memdir.interfaces.http.binding import AGENT

SESSION_HEADER = "mcp-session-id"
DEFAULT_PER_TOKEN = 16
DEFAULT_IDLE_SECONDS = 300.0


@dataclass
class _Session:
    token_id: str
    agent: str | None
    last_seen: float
    in_flight: int = 0


class McpSessions:
    """Binds each MCP session to its token and agent; caps the sessions of a token."""

    def __init__(
        self,
        app: ASGIApp,
        per_token: int = DEFAULT_PER_TOKEN,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.per_token = per_token
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._sessions: dict[str, _Session] = {}

    def open_sessions(self, token_id: str | None = None) -> int:
        """How many sessions are open (of ``token_id``, when given)."""
        self._forget_idle()
        return sum(token_id in (None, s.token_id) for s in self._sessions.values())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get(PRINCIPAL)
        if scope["type"] != "http" or not isinstance(principal, Principal):
            await self.app(scope, receive, send)
            return
        agent: str | None = scope.get(AGENT)
        scope = {**scope, "user": _owner(principal, agent)}
        self._forget_idle()
        session_id = Headers(scope=scope).get(SESSION_HEADER)
        if session_id is None:
            await self._open(principal, agent, scope, receive, send)
            return
        session = self._sessions.get(session_id)
        if session is None:  # unknown or closed: the SDK answers 404, the client starts over
            await self.app(scope, receive, send)
            return
        refusal = _refusal(session, principal, agent)
        if refusal:
            await send_problem(send, 403, "Forbidden", refusal)
            return
        session.in_flight += 1
        answered_404 = False

        async def watching_send(message: Message) -> None:
            nonlocal answered_404
            if message["type"] == "http.response.start" and message["status"] == 404:
                answered_404 = True
            await send(message)

        try:
            await self.app(scope, receive, watching_send)
        finally:
            session.in_flight -= 1
            session.last_seen = self._clock()
            if answered_404 or scope.get("method") == "DELETE":
                self._sessions.pop(session_id, None)

    async def _open(
        self, principal: Principal, agent: str | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if scope.get("method") == "POST":
            held = self.open_sessions(principal.token_id)
            if held >= self.per_token:
                await send_problem(
                    send,
                    429,
                    "Too Many Requests",
                    f"{principal.describe()} already has {held} open MCP sessions "
                    f"(server.mcp_sessions_per_token = {self.per_token}); close one (DELETE "
                    "/mcp with its Mcp-Session-Id header) or wait until one has been idle for "
                    f"{self.idle_seconds:.0f} s",
                    {"Retry-After": str(max(1, round(self.idle_seconds)))},
                )
                return
        opened: str | None = None

        async def recording_send(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if opened is not None:
                    self._sessions[opened] = _Session(principal.token_id, agent, self._clock())
            await send(message)

        await self.app(scope, receive, recording_send)
        if opened is not None and opened in self._sessions:
            self._sessions[opened].last_seen = self._clock()

    def _forget_idle(self) -> None:
        """Drop the sessions the SDK has closed for idleness (same clock, a second's slack)."""
        cutoff = self._clock() - self.idle_seconds - 1.0
        for session_id, session in list(self._sessions.items()):
            if session.in_flight == 0 and session.last_seen < cutoff:
                del self._sessions[session_id]


def _refusal(session: _Session, principal: Principal, agent: str | None) -> str:
    if session.token_id != principal.token_id:
        return (
            "this MCP session was opened with another token; open a new session (an "
            "initialize request without the Mcp-Session-Id header) with this token"
        )
    if session.agent != agent:
        opened_as = "the global workspace" if session.agent is None else repr(session.agent)
        asked = "the global workspace" if agent is None else repr(agent)
        return (
            f"this MCP session is bound to {opened_as} and cannot act for {asked}; keep "
            "?agent= as it was when the session opened, or open a new session for the other "
            "agent"
        )
    return ""


def _owner(principal: Principal, agent: str | None) -> AuthenticatedUser:
    """The request's owner as the MCP SDK compares it: token and agent, never the secret."""
    token = AccessToken(
        token=principal.token_id, client_id=principal.token_id, scopes=[], subject=agent
    )
    return AuthenticatedUser(token)
