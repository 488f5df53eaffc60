"""``memdir serve``: the REST API and MCP over HTTP under uvicorn, plus background services.

Background services (the file watcher that re-syncs the index on change, and the
curation scheduler once it exists) start before the server and stop after it.
Each is built by a factory that receives the server's ``AgentMemories``.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import uvicorn

from memdir.config import resolve_home
from memdir.errors import READ_ONLY_FIX, MemdirError
from memdir.index import Watcher
from memdir.interfaces.http.app import ServerLimits, create_app
from memdir.interfaces.http.memories import AgentMemories, MemoryOpener
from memdir.machine import limit_malloc_arenas
from memdir.memory import Memory
from memdir.memory.reads import best_effort, read_only_home
from memdir.workspace import Workspace

log = logging.getLogger(__name__)

REST_FACTOR = 3.0  # the watcher's sync rests this many times its own duration ...
MAX_REST_SECONDS = 10.0  # ... but never longer than this


class BackgroundService(Protocol):
    """Something that runs beside the server: started before it, stopped after it."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


ServiceFactory = Callable[[AgentMemories], BackgroundService | None]


def watch_and_sync(debounce_ms: int = 500) -> ServiceFactory:
    """A factory for the file watcher: on a change under the home, re-sync every agent.

    The watcher syncs through a ``Memory`` of its own: its long index writes
    (a large daily note takes a second) hold only its own connection, so the
    searches of the request threads read on (SQLite WAL) instead of queueing
    behind them.
    """

    def build(memories: AgentMemories) -> BackgroundService:
        indexer = memories.open_unshared(None)
        roots = [indexer.layout.global_root, indexer.layout.agents_dir]
        for root in roots:
            root.mkdir(parents=True, exist_ok=True)
        stopped = threading.Event()

        def on_change(changed: set[Path]) -> None:
            started = time.monotonic()
            try:
                report = indexer.sync(all_agents=True)
            except MemdirError as exc:  # keep watching; the next change retries
                log.warning("re-sync after %d changed file(s) failed: %s", len(changed), exc)
                return
            log.info("re-synced the index after %d changed file(s): %s", len(changed), report)
            # Under a steady stream of writes, syncing again at once would keep a core
            # busy; rest three times as long as the sync took (changes gather meanwhile).
            stopped.wait(min(MAX_REST_SECONDS, REST_FACTOR * (time.monotonic() - started)))

        watcher = Watcher(roots, on_change, debounce_ms=debounce_ms)
        return _Indexer(watcher, indexer, stopped)

    return build


class _Indexer:
    """The watcher and the ``Memory`` it syncs through, stopped and closed together."""

    def __init__(self, watcher: Watcher, memory: Memory, stopped: threading.Event) -> None:
        self.watcher = watcher
        self.memory = memory
        self.stopped = stopped

    def start(self) -> None:
        self.watcher.start()
        self.memory.freshness.watched(True)  # searches leave other writers' work to it

    def stop(self) -> None:
        self.memory.freshness.watched(False)
        self.stopped.set()
        self.watcher.stop()
        self.memory.close()


def serve(
    home: str | os.PathLike[str] | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    agent: str | None = None,
    *,
    open_memory: MemoryOpener | None = None,
    services: Sequence[ServiceFactory] | None = None,
    log_level: str = "warning",
    limits: ServerLimits | None = None,
) -> None:
    """Serve the REST API (``/api/v1``) and MCP (``/mcp``) until interrupted.

    ``services`` default to the file watcher; pass ``[]`` for none, or add the
    scheduler's factory. Binds 127.0.0.1 unless ``host`` says otherwise. ``limits``
    bound the open workspaces and MCP sessions (``[server]`` settings).
    """
    limit_malloc_arenas()  # before the request and service threads start
    home_path = resolve_home(home)
    read_only = read_only_home(home_path)
    if read_only:  # reads answer from the files and index as they are; writes are refused
        sys.stderr.write(
            f"memdir serve: the home {str(home_path)!r} is read-only: serving reads only "
            "(search, recall, get, prompt; no file watcher); writes answer 503 until the "
            f"home is writable. To write, {READ_ONLY_FIX}\n"
        )
    else:  # first run: the global workspace and its bootstrap files (a full disk: later)
        best_effort("seeding the global workspace", lambda: Workspace(home_path).seed(), None)
    app = create_app(home_path, agent=agent, open_memory=open_memory, host=host, limits=limits)
    memories: AgentMemories = app.state.memories
    factories = [watch_and_sync()] if services is None else list(services)
    if read_only:
        factories = []
    running = [s for s in (factory(memories) for factory in factories) if s is not None]
    for service in running:
        service.start()
    try:
        config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on")
        uvicorn.Server(config).run()
    finally:
        for service in reversed(running):
            service.stop()
