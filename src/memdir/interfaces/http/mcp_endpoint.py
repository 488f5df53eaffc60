"""The MCP endpoint at ``/mcp``, with its HTTP-level refusals as problem JSON.

The MCP SDK answers a request it refuses before any JSON-RPC (a foreign ``Host``
or ``Origin`` under DNS-rebinding protection, a POST without JSON) with a bare
line of text (no content type, or ``text/plain``). Every other answer of this
server is RFC 9457 problem JSON, so ``McpEndpoint`` turns those lines into
problem documents whose detail says what was refused and what to do instead.
JSON-RPC answers and the event stream pass through untouched.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memdir.interfaces.http.auth import send_problem

_TITLES = {400: "Bad Request", 403: "Forbidden", 413: "Content Too Large",
           421: "Misdirected Request"}  # fmt: skip


def _detail(text: str, headers: Headers) -> str:
    """The SDK's one-line refusal, said with the offending value and the way out."""
    if text == "Invalid Host header":
        return (
            f"the Host header {headers.get('host', '')!r} is not one this server answers to on "
            "/mcp (DNS-rebinding protection); connect to 127.0.0.1, localhost or [::1] "
            "with the server's port"
        )
    if text == "Invalid Origin header":
        return (
            f"requests from the origin {headers.get('origin', '')!r} may not use /mcp "
            "(DNS-rebinding protection); only pages served from 127.0.0.1, localhost or [::1] may"
        )
    if text == "Invalid Content-Type header":
        return "a POST to /mcp must carry a JSON-RPC message with 'Content-Type: application/json'"
    return text or "the MCP endpoint refused the request"


class McpEndpoint:
    """Wraps the SDK's streamable-HTTP app; refusals in plain text become problem JSON."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: Message | None = None  # the start of a plain-text refusal, until its body
        body = b""

        async def rewriting_send(message: Message) -> None:
            nonlocal held, body
            if message["type"] == "http.response.start":
                content_type = Headers(raw=message.get("headers", [])).get("content-type", "")
                plain = not content_type or content_type.startswith("text/plain")
                if message["status"] >= 400 and plain:
                    held = message
                    return
            elif held is not None and message["type"] == "http.response.body":
                body += message.get("body", b"")
                if not message.get("more_body", False):
                    status = int(held["status"])
                    text = body.decode("utf-8", errors="replace").strip()
                    detail = _detail(text, Headers(scope=scope))
                    await send_problem(send, status, _TITLES.get(status, "Refused"), detail)
                return
            await send(message)

        await self.app(scope, receive, rewriting_send)
