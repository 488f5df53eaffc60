"""Server commands: ``serve`` (REST + MCP over HTTP + watcher + scheduler) and ``mcp`` (stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from memdir.interfaces.cli._app import state


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("mcp")(mcp)


def mcp(ctx: typer.Context) -> None:
    """Serve the memory tools over MCP on stdin/stdout (for Claude Desktop, Cursor, ...)."""
    from memdir.interfaces.mcp import run_stdio

    with state(ctx).open_memory() as memory:
        run_stdio(memory)


def serve(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="Bind address (default server.host).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default server.port).")] = None,
) -> None:
    """Serve the REST API (/api/v1), MCP over HTTP (/mcp) and the memory browser (/),
    with the file watcher and the consolidation scheduler."""
    from memdir.interfaces.http import serve as run_server
    from memdir.interfaces.http import watch_and_sync

    st = state(ctx)
    loaded = st.settings()
    cfg = loaded.settings
    run_server(
        loaded.home,
        host or cfg.server.host,
        cfg.server.port if port is None else port,
        st.agent,
        open_memory=st.open_memory,
        services=[watch_and_sync(cfg.index.watch_debounce_ms)],
    )
