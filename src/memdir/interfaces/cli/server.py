"""Server commands: ``serve`` (REST + MCP over HTTP + watcher + scheduler) and ``mcp`` (stdio)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from memdir.interfaces.cli._app import err_console, state
from memdir.interfaces.cli.extras import require_server

log = logging.getLogger(__name__)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("mcp")(mcp)


def consolidation_schedule(cron: str) -> Callable[[Any], Any]:
    """A service factory: consolidate every workspace on ``curate.consolidate_cron``."""
    from memdir.config import CurateSettings

    return curation_schedule(CurateSettings(consolidate_cron=cron))


def curation_schedule(curate: Any) -> Callable[[Any], Any]:
    """A service factory for ``memdir serve``'s scheduler, from the ``[curate]`` settings.

    Consolidation of every workspace on ``consolidate_cron`` (unless ``auto_consolidate``
    is off) and, when ``heartbeat`` is on and a model is configured, a heartbeat of every
    workspace on ``heartbeat_cron``. No job at all: no scheduler thread.
    """
    from memdir.curate import Scheduler

    def build(memories: Any) -> Scheduler | None:
        scheduler = Scheduler()
        if curate.auto_consolidate:
            scheduler.add_job(
                "consolidate", lambda: _consolidate_all(memories), cron=curate.consolidate_cron
            )
        if curate.heartbeat:
            if memories.get(None).chat_model is None:
                log.warning(
                    "curate.heartbeat is on but no chat model is configured (llm.provider); "
                    "the heartbeat does not run"
                )
            else:
                scheduler.add_job(
                    "heartbeat", lambda: _heartbeat_all(memories), cron=curate.heartbeat_cron
                )
        return scheduler if scheduler.next_runs() else None

    return build


def _workspaces(memories: Any) -> list[str | None]:
    return [None, *memories.get(None).agents()]


def _consolidate_all(memories: Any) -> None:
    for agent in _workspaces(memories):
        with memories.lease(agent) as memory:  # not closed by the cache meanwhile
            result = memory.consolidate()
        log.info("consolidated %s: %d entries added", agent or "global", len(result.added))


def _heartbeat_all(memories: Any) -> None:
    from memdir.agent.heartbeat import run_heartbeat

    for agent in _workspaces(memories):
        with memories.lease(agent) as memory:
            run = run_heartbeat(memory, memory.chat_model)
        log.info("heartbeat of %s: %s", run.agent, run.skipped_reason or run.reply[:80])


def serve_banner(home: Path, host: str, port: int, token: str, on_terminal: bool) -> str:
    """What ``memdir serve`` says when it starts.

    On a terminal the browser line is the sign-in link (``/#token=...``: the page
    reads the token from the fragment, which never reaches the server or its logs).
    Piped output (a log file, a service manager) never carries the token.
    """
    from memdir.interfaces.http import token_path
    from memdir.interfaces.http.browser import browser_url

    signed_in = browser_url(host, port, token)
    base = signed_in.split("/#", 1)[0]
    browser = (
        f"{signed_in}   (signs you in; keep it private)"
        if on_terminal
        else f"{base}/   (paste the token from {token_path(home)}; the sign-in link is "
        "printed only on a terminal)"
    )
    return (
        f"memdir serving {home}\n"
        f"  browser   {browser}\n"
        f"  REST API  {base}/api/v1   (interactive docs: {base}/docs)\n"
        f"  MCP       {base}/mcp\n"
        f"  token     {token_path(home)} (send as 'Authorization: Bearer <token>')\n"
        "Ctrl-C to stop."
    )


def mcp(ctx: typer.Context) -> None:
    """Serve the memory tools over MCP on stdin/stdout (for Claude Desktop, Cursor, ...)."""
    require_server("mcp")
    from memdir.interfaces.mcp import run_stdio

    with state(ctx).open_memory() as memory:
        run_stdio(memory)


def serve(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="Bind address (default server.host).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default server.port).")] = None,
) -> None:
    """Serve the REST API (/api/v1), MCP over HTTP (/mcp) and the memory browser (/),
    with the file watcher and the curation scheduler (consolidation; the heartbeat when
    curate.heartbeat is on)."""
    require_server("serve")
    from memdir.interfaces.http import load_or_create_token, watch_and_sync
    from memdir.interfaces.http.app import ServerLimits
    from memdir.interfaces.http.serve import serve as run_server
    from memdir.memory import Memory

    st = state(ctx)
    loaded = st.settings()
    cfg = loaded.settings
    bind = host or cfg.server.host
    bind_port = cfg.server.port if port is None else port
    token = load_or_create_token(loaded.home)
    typer.echo(serve_banner(loaded.home, bind, bind_port, token, err_console.is_terminal), err=True)
    first = Memory.open(settings=loaded)  # opens nothing; lends its embedder to every agent
    shared = first.embedder

    def open_memory(agent: str | None) -> Memory:
        """An agent's memory with the server's settings and its one embedder (one model
        in memory however many agents are open)."""
        return Memory.open(agent_id=agent or st.agent, settings=st.settings(), embedder=shared)

    run_server(
        loaded.home,
        bind,
        bind_port,
        st.agent,
        open_memory=open_memory,
        services=[watch_and_sync(cfg.index.watch_debounce_ms), curation_schedule(cfg.curate)],
        limits=ServerLimits.from_settings(cfg.server),
    )
