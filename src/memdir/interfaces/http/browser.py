"""The memory browser: a static page at ``/`` over the REST API, and its facts timeline route.

The page (``static/index.html`` with plain ES modules and CSS, no build step)
is public: ``BrowserPages`` serves ``/`` and ``/static/...`` ahead of the bearer
auth, so a person can open it and then give the token once (a form, kept in
``localStorage``) or through the URL fragment ``#token=...`` that
``browser_url`` builds for ``memdir serve`` to print. Fragments never reach the
server, and the page drops it from the address bar once read. Every API call
the page makes carries the token like any other client.

The page lands on the latest notes and facts (``GET /api/v1/recent``); its views are
search (each hit's reason in words, the raw breakdown folded), files (rendered Markdown,
a folder tree, quick-open, free editing reviewed as a diff and saved with the SHA-256 of
the text opened, new/rename/delete, earlier versions), facts (current first, edit and
history), context (the assembled prompt, per-file switches and order) and activity. The
view (tab, query, agent, open file) is kept in the address, so reload, bookmarks and back
work. It changes memory through the same routes as every client (docs/browser.md).

The page treats memory as untrusted data: it builds the DOM with elements and
text nodes only (its Markdown renderer too), and the strict Content-Security-Policy
sent with it (no inline script, no inline handlers) is a second line of defence;
``/favicon.ico`` is served with the page, so browsers asking for it get no 401.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, FastAPI, Query
from fastapi.encoders import jsonable_encoder
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memdir.errors import InvalidInputError
from memdir.interfaces.http.problems import NotAvailableError
from memdir.interfaces.http.routes import MemoryDep

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
PAGE_PATHS = ("/", "/index.html", "/favicon.ico")
STATIC_PREFIX = "/static/"
WILDCARD_HOSTS = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-cache",
}


def browser_url(host: str, port: int, token: str) -> str:
    """The URL that opens the browser already signed in: ``http://HOST:PORT/#token=TOKEN``.

    A wildcard bind address (``0.0.0.0``, ``::``) becomes the loopback address,
    which a browser on the same machine can open; IPv6 hosts get brackets.
    """
    if isinstance(port, bool) or not 0 < port < 65536:
        raise InvalidInputError(f"port must be between 1 and 65535, got {port!r}")
    if not token:
        raise InvalidInputError("the API token is empty; read it from $MEMDIR_HOME/api-token")
    shown = WILDCARD_HOSTS.get(host, host)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/#token={quote(token, safe='')}"


# -- the facts timeline ------------------------------------------------------------------

timeline_router = APIRouter(prefix="/api/v1")


def _list_all_facts(memory: Any, category: str | None) -> list[Any]:
    """Every fact, superseded and (when the facade can) forgotten ones too."""
    list_facts = getattr(memory, "list_facts", None)
    if list_facts is None:
        raise NotAvailableError(
            "facts are not available in this memdir version yet (Memory.list_facts is "
            "missing); search and files still work"
        )
    facts: list[Any] = list_facts(
        category=category, as_of=None, include_superseded=True, include_forgotten=True
    )
    return facts


def build_timeline(facts: list[Any]) -> list[dict[str, Any]]:
    """Facts as JSON, oldest first, each with ``superseded_by`` and a ``state``.

    ``state`` is ``forgotten``, ``superseded`` (its ``valid_to`` is set) or
    ``current``; ``superseded_by`` is the id of the fact that replaced it.
    """
    successor = {fact.supersedes: fact.id for fact in facts if fact.supersedes}
    rows: list[dict[str, Any]] = []
    for fact in sorted(facts, key=lambda f: (f.valid_from, f.recorded_at)):
        row: dict[str, Any] = jsonable_encoder(fact)
        forgotten = getattr(fact, "forgotten_at", None) is not None
        row["superseded_by"] = successor.get(fact.id)
        row["state"] = (
            "forgotten" if forgotten else "superseded" if fact.valid_to is not None else "current"
        )
        rows.append(row)
    return rows


@timeline_router.get("/facts/timeline", tags=["facts"])
def facts_timeline(
    memory: MemoryDep,
    category: Annotated[str | None, Query(max_length=32)] = None,
) -> dict[str, Any]:
    """Every fact over time (superseded and forgotten ones too) for the browser's timeline.

    ``categories`` lists the categories present before the ``category`` filter.
    """
    everything = _list_all_facts(memory, None)
    rows = build_timeline(everything)
    categories = sorted({row["category"] for row in rows})
    if category:
        rows = [row for row in rows if row["category"] == category]
    return {"facts": rows, "categories": categories}


# -- the page and its assets -------------------------------------------------------------


async def _index(request: Request) -> Response:
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html")


async def _favicon(request: Request) -> Response:
    """The page's icon, also at the address browsers ask for unprompted (no 401 logged)."""
    return FileResponse(STATIC_DIR / "favicon.svg", media_type="image/svg+xml")


def _pages_app() -> Starlette:
    return Starlette(
        routes=[
            Route("/", _index, methods=["GET", "HEAD"]),
            Route("/index.html", _index, methods=["GET", "HEAD"]),
            Route("/favicon.ico", _favicon, methods=["GET", "HEAD"]),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
        ]
    )


class BrowserPages:
    """Serves the page (``/``) and its assets (``/static/...``) without a token.

    Added as the outermost middleware, so these paths never reach the bearer
    auth; every other request passes through untouched.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.pages = _pages_app()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        is_page = path in PAGE_PATHS or path.startswith(STATIC_PREFIX)
        if scope["type"] != "http" or not is_page or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return

        async def secured_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k != b"cache-control"]
                headers.extend((k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items())
                message = {**message, "headers": headers}
            await send(message)

        await self.pages(scope, receive, secured_send)


def mount_browser(app: FastAPI) -> None:
    """Add the browser to ``app``: call it after the auth middleware is added."""
    app.include_router(timeline_router)
    # /facts/timeline goes ahead of /facts/{fact_id}, which would take "timeline" for an id.
    app.router.routes.insert(0, app.router.routes.pop())
    app.add_middleware(BrowserPages)
