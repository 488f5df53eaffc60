"""The REST API: ``/api/v1`` over the ``Memory`` facade, MCP at ``/mcp``, token auth.

``create_app(home)`` returns the FastAPI app; ``serve(home, host, port)`` runs it
with uvicorn and the background services; ``python -m memdir.interfaces.http``
runs it without the CLI. Names are imported on first use, so that reading the
token (``load_or_create_token``) does not pull in FastAPI and the MCP SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memdir.interfaces.http.app import create_app
    from memdir.interfaces.http.auth import load_or_create_token, token_path
    from memdir.interfaces.http.memories import AgentMemories
    from memdir.interfaces.http.serve import BackgroundService, serve, watch_and_sync

_HOMES = {
    "AgentMemories": "memories",
    "BackgroundService": "serve",
    "create_app": "app",
    "load_or_create_token": "auth",
    "serve": "serve",
    "token_path": "auth",
    "watch_and_sync": "serve",
}
__all__ = [
    "AgentMemories",
    "BackgroundService",
    "create_app",
    "load_or_create_token",
    "serve",
    "token_path",
    "watch_and_sync",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
