"""Server commands: ``serve`` (REST + MCP over HTTP + watcher + scheduler) and ``mcp`` (stdio)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any

import typer

from memdir.interfaces.cli._app import state

log = logging.getLogger(__name__)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("mcp")(mcp)


def consolidation_schedule(cron: str) -> Callable[[Any], Any]:
    """A service factory: consolidate every workspace on ``curate.consolidate_cron``."""
    from memdir.curate import Scheduler

    def build(memories: Any) -> Scheduler:
        scheduler = Scheduler()

        def consolidate_all() -> None:
            default = memories.get(None)
            for agent in [None, *default.agents()]:
                result = memories.get(agent).consolidate()
                log.info("consolidated %s: %d entries added", agent or "global", len(result.added))

        scheduler.add_job("consolidate", consolidate_all, cron=cron)
        return scheduler

    return build


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
    from memdir.interfaces.http import load_or_create_token, token_path, watch_and_sync
    from memdir.interfaces.http.serve import serve as run_server

    st = state(ctx)
    loaded = st.settings()
    cfg = loaded.settings
    bind = host or cfg.server.host
    bind_port = cfg.server.port if port is None else port
    load_or_create_token(loaded.home)
    base = f"http://{bind}:{bind_port}"
    typer.echo(
        f"memdir serving {loaded.home}\n"
        f"  REST API  {base}/api/v1   (docs: {base}/docs)\n"
        f"  MCP       {base}/mcp\n"
        f"  browser   {base}/\n"
        f"  token     {token_path(loaded.home)} (send as 'Authorization: Bearer <token>')\n"
        "Ctrl-C to stop.",
        err=True,
    )
    run_server(
        loaded.home,
        bind,
        bind_port,
        st.agent,
        open_memory=st.open_memory,
        services=[
            watch_and_sync(cfg.index.watch_debounce_ms),
            consolidation_schedule(cfg.curate.consolidate_cron),
        ],
    )
