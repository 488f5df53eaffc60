"""Errors as RFC 9457 problem JSON: the MemdirError tree mapped to HTTP statuses."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memdir.errors import (
    AccessDeniedError,
    ChatModelError,
    ConfigError,
    ConflictError,
    ContextLengthError,
    DependencyError,
    DiskFullError,
    EditError,
    EmbeddingError,
    IndexMismatchError,
    InvalidAgentIdError,
    InvalidInputError,
    InvalidPathError,
    MemdirError,
    NotFoundError,
    ReadOnlyHomeError,
    StoreError,
)
from memdir.tools import ToolError

log = logging.getLogger(__name__)

PROBLEM_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:memdir:error:"

# Most specific first: the first class an error is an instance of decides.
STATUS_BY_ERROR: tuple[tuple[type[MemdirError], int], ...] = (
    (InvalidPathError, 400),
    (InvalidAgentIdError, 400),
    (InvalidInputError, 422),
    (NotFoundError, 404),
    (AccessDeniedError, 403),
    (EditError, 409),
    (ConflictError, 409),
    (IndexMismatchError, 409),
    (StoreError, 503),
    (DiskFullError, 507),
    (ReadOnlyHomeError, 503),
    (EmbeddingError, 503),
    (DependencyError, 501),
    (ContextLengthError, 413),
    (ChatModelError, 502),
    (ConfigError, 500),
)


PROBLEM_SCHEMA: dict[str, object] = {
    "type": "object",
    "description": "An RFC 9457 problem document.",
    "properties": {
        "type": {"type": "string", "description": "urn:memdir:error:<kind> or about:blank"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string", "description": "What happened and what to do next."},
        "instance": {"type": "string", "description": "The request path."},
        "code": {"type": "string", "description": "The kind of error, e.g. conflict."},
    },
    "required": ["type", "title", "status", "detail"],
}
_PROBLEM_STATUSES = {
    400: "Invalid workspace path or agent id",
    401: "Missing or wrong bearer token",
    403: "The token may not act for that agent or workspace",
    404: "No such file, fact, session or route",
    409: "The edit text is missing or ambiguous, the file changed since it was read (or "
    "already exists), or the index was built by another embedder",
    413: "The request body is too large",
    422: "Invalid arguments",
    500: "Unexpected error (see the server log)",
    501: "Feature not available",
    502: "The chat model failed",
    503: "The index database or the embedder is unavailable, or the home is read-only",
    507: "The disk is full; nothing was written",
}
PROBLEM_RESPONSES: dict[int | str, dict[str, object]] = {
    status: {
        "description": description,
        "content": {PROBLEM_TYPE: {"schema": PROBLEM_SCHEMA}},
    }
    for status, description in _PROBLEM_STATUSES.items()
}
"""Every error a route can answer, for the OpenAPI spec (all are problem JSON)."""


REST_STEP_NAMES = {
    "list_files": "GET /api/v1/files",
    "read_file": "GET /api/v1/files/{path}",
    "write_file": "PUT /api/v1/files/{path}",
    "recall": "GET /api/v1/facts/recall (or GET /api/v1/facts)",
    "replace_all": 'send "replace_all": true',
    "list_sessions": "`memdir session list` on the server",
    "reread": 'GET /api/v1/files/{path} (its "sha256" is the new expected_sha256)',
}
"""How the REST API names each next step an error can point to (``memdir.errors.Action``)."""


class NotAvailableError(MemdirError):
    """A route whose feature is not wired in this version of memdir (HTTP 501)."""


def _slug(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name.removesuffix("Error")).lower()


def problem(
    status: int,
    title: str,
    detail: str,
    type_: str = "about:blank",
    instance: str | None = None,
    headers: Mapping[str, str] | None = None,
    code: str | None = None,
) -> JSONResponse:
    body: dict[str, object] = {"type": type_, "title": title, "status": status, "detail": detail}
    if instance:
        body["instance"] = instance
    if code:
        body["code"] = code  # the error's kind alone, e.g. "conflict" (the end of ``type``)
    return JSONResponse(body, status_code=status, media_type=PROBLEM_TYPE, headers=headers)


def status_of(error: MemdirError) -> int:
    if isinstance(error, NotAvailableError):
        return 501
    if isinstance(error, ToolError):
        cause = error.__cause__
        return status_of(cause) if isinstance(cause, MemdirError) else 422
    return next((status for cls, status in STATUS_BY_ERROR if isinstance(error, cls)), 500)


def problem_for(error: MemdirError, instance: str | None = None) -> JSONResponse:
    """The problem document for a memdir error; ``type`` names the error class."""
    status = status_of(error)
    source = error.__cause__ if isinstance(error, ToolError) else error
    name = type(source).__name__ if isinstance(source, MemdirError) else "InvalidArguments"
    title = re.sub(r"(?<!^)(?=[A-Z])", " ", name.removesuffix("Error")).capitalize()
    if status >= 500 and status != 501:
        log.error("request %s failed: %s", instance, error)
    slug = _slug(name)
    detail = error.describe(REST_STEP_NAMES)
    return problem(status, title, detail, TYPE_PREFIX + slug, instance, code=slug)


async def _on_memdir_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemdirError)
    return problem_for(exc, request.url.path)


async def _on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    parts = [_validation_problem(error) for error in exc.errors()]
    return problem(
        422, "Invalid request", "; ".join(parts), TYPE_PREFIX + "invalid-request", request.url.path
    )


SEND_JSON = (
    "send a JSON object with the route's fields (see /openapi.json) and "
    "'Content-Type: application/json'"
)
_PLACES = {"query": "query parameter", "path": "path parameter", "header": "header",
           "cookie": "cookie", "body": "body field"}  # fmt: skip


def _validation_problem(error: Mapping[str, Any]) -> str:
    """One validation error in REST terms: ``the query parameter 'query' is required``."""
    loc = [str(part) for part in error.get("loc", ())]
    place = _PLACES.get(loc[0], "") if loc else ""
    name = ".".join(loc[1:] if place else loc)
    if not name:
        subject = "the request body" if place == "body field" else "the request"
    else:
        subject = f"the {place or 'field'} {name!r}"
    if error.get("type") == "missing":
        return f"{subject} is required"
    if error.get("type") == "json_invalid" and place == "body field":
        why = (error.get("ctx") or {}).get("error") or error.get("msg", "invalid")
        return f"the request body is not valid JSON ({why} at character {name}); {SEND_JSON}"
    return f"{subject}: {error.get('msg', 'invalid')}"


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    title = {404: "Not Found", 405: "Method Not Allowed"}.get(exc.status_code, "HTTP error")
    detail = str(exc.detail)
    if exc.status_code == 404 and detail == "Not Found":
        detail = f"no route {request.url.path!r}; see /openapi.json for the routes"
    if exc.status_code == 400 and detail == "There was an error parsing the body":
        detail = (
            f"the request body could not be read as JSON (UTF-8, not nested too deep); {SEND_JSON}"
        )
    # keep the exception's headers: a 405 must say which methods are allowed (Allow)
    return problem(exc.status_code, title, detail, instance=request.url.path, headers=exc.headers)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    # Boundary: a bug in one request becomes a 500 problem, logged with its traceback.
    log.error("unexpected error in %s %s", request.method, request.url.path, exc_info=exc)
    detail = "an unexpected error occurred; see the memdir server log"
    return problem(500, "Internal Server Error", detail, instance=request.url.path)


def install_problem_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` with problem JSON."""
    app.add_exception_handler(Exception, _on_unexpected)
    app.add_exception_handler(MemdirError, _on_memdir_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
