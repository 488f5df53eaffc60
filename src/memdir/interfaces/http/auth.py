"""Bearer-token auth, the Host check and the request body limit, as plain ASGI middleware.

The admin token lives in ``$MEMDIR_HOME/api-token``: the first run creates it
(``secrets.token_urlsafe``, mode 0600, written to a temp file and hard-linked into
place so two first runs agree on one token) and every later run reuses it. Tokens
scoped to one agent (and more admin tokens) come from ``memdir token create`` and
are checked by ``memdir.access.AccessTokens``; ``BearerAuth`` puts the request's
``Principal`` into the ASGI scope (``PRINCIPAL``) for the agent binding.
Pure ASGI (not ``BaseHTTPMiddleware``) so the MCP stream under ``/mcp`` passes
through untouched.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memdir.access import Principal
from memdir.config import resolve_home
from memdir.errors import ConfigError
from memdir.history import attributed

log = logging.getLogger(__name__)

TOKEN_FILE = "api-token"
PUBLIC_PATHS = frozenset({"/health", "/openapi.json", "/docs"})
PUBLIC_PREFIXES = ("/docs/",)  # Swagger UI's assets and its OAuth redirect page
PRINCIPAL = "memdir.principal"  # the ASGI scope key of the request's Principal
TokenCheck = Callable[[str], Principal | None]


def token_path(home: str | os.PathLike[str] | None = None) -> Path:
    """Where the API token of ``home`` is kept."""
    return resolve_home(home) / TOKEN_FILE


def load_or_create_token(home: str | os.PathLike[str] | None = None) -> str:
    """The API token of ``home``, created on first use (mode 0600)."""
    path = token_path(home)
    if not path.exists():
        _create_token(path)
    token = path.read_text(encoding="utf-8").strip()
    if len(token) < 16:
        raise ConfigError(
            f"the API token in {str(path)!r} is empty or too short; delete the file and "
            "restart the server to create a new one"
        )
    return token


def _create_token(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secrets.token_urlsafe(32) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, path)  # atomic, and never replaces a token another process made
            log.info("created the API token at %s", path)
        except FileExistsError:
            pass
    finally:
        temp.unlink(missing_ok=True)


async def send_problem(
    send: Send, status: int, title: str, detail: str, headers: dict[str, str] | None = None
) -> None:
    """Answer with an RFC 9457 problem document from ASGI middleware."""
    body = json.dumps(
        {"type": "about:blank", "title": title, "status": status, "detail": detail}
    ).encode()
    raw = [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()),
    ]
    raw.extend((k.lower().encode(), v.encode()) for k, v in (headers or {}).items())
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class BearerAuth:
    """Refuses every HTTP request but ``PUBLIC_PATHS`` without a valid bearer token, and
    records whom an accepted one stands for in ``scope[PRINCIPAL]``."""

    def __init__(self, app: ASGIApp, check: TokenCheck) -> None:
        self.app = app
        self._check = check

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"] if scope["type"] == "http" else ""
        if scope["type"] != "http" or path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES):
            await self.app(scope, receive, send)
            return
        try:
            principal = self._principal(scope)
        except ConfigError as exc:  # an unreadable tokens.json: say so, refuse everyone
            log.error("checking a bearer token failed: %s", exc)
            await send_problem(send, 500, "Internal Server Error", str(exc))
            return
        if principal is not None:
            scope[PRINCIPAL] = principal
            what = f"{scope.get('method', '')} {path}".strip()  # a tool called inside says more
            with attributed(token=principal.token_id, tool=what):  # for the history
                await self.app(scope, receive, send)
            return
        await send_problem(
            send,
            401,
            "Unauthorized",
            "missing, wrong or revoked bearer token; send 'Authorization: Bearer <token>' "
            "with the token from $MEMDIR_HOME/api-token or one made by `memdir token create`",
            {"WWW-Authenticate": 'Bearer realm="memdir"'},
        )

    def _principal(self, scope: Scope) -> Principal | None:
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                if scheme.lower() == b"bearer":
                    return self._check(credentials.strip().decode("latin-1"))
        return None


def fixed_token_check(token: str, fallback: TokenCheck | None = None) -> TokenCheck:
    """A check that accepts ``token`` as the admin (tests and embedders pass one), then
    asks ``fallback``."""
    from memdir.access import API_TOKEN_ID

    expected = token.encode()

    def check(presented: str) -> Principal | None:
        if hmac.compare_digest(presented.encode("latin-1"), expected):
            return Principal(API_TOKEN_ID, None)
        return fallback(presented) if fallback is not None else None

    return check


class _BodyTooLarge(Exception):
    pass


class BodyLimit:
    """Answers 413 when a request body exceeds ``max_bytes`` (declared or streamed)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        seen = 0
        started = refused = False

        async def limited_receive() -> Message:
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    if not started and not refused:
                        # Answer now: the app may catch the error below while parsing
                        # the body and answer 400 itself; that answer is dropped.
                        refused = True
                        await self._refuse(send)
                    raise _BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _BodyTooLarge:
            if not started and not refused:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        await send_problem(
            send,
            413,
            "Content Too Large",
            f"the request body is larger than {self.max_bytes} bytes; send less",
        )


class HostCheck:
    """Refuses requests whose ``Host`` header is not one of ``hosts`` (any port): 421.

    A server bound to loopback is reachable from a browser page through DNS
    rebinding (a hostile name that resolves to 127.0.0.1); such a request
    carries the hostile name in ``Host``. ``/mcp`` checks the same in the MCP SDK.
    """

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...]) -> None:
        self.app = app
        self.hosts = frozenset(hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _host_name(scope) in self.hosts:
            await self.app(scope, receive, send)
            return
        raw = next((v for k, v in scope.get("headers", []) if k == b"host"), b"")
        await send_problem(
            send,
            421,
            "Misdirected Request",
            f"the Host header {raw.decode('latin-1')!r} is not one this server answers to "
            "(DNS-rebinding protection); connect to 127.0.0.1, localhost or [::1] with the "
            "server's port",
        )


def _host_name(scope: Scope) -> str:
    """The ``Host`` header without its port (``[::1]:8765`` -> ``::1``)."""
    raw = next((v for k, v in scope.get("headers", []) if k == b"host"), b"")
    host = raw.decode("latin-1").strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
