"""Watch workspace folders for markdown changes (``watchfiles``), debounced.

``watch_paths`` blocks until its ``stop_event`` is set; ``Watcher`` runs it in a
daemon thread of a long-lived process (the MCP server, ``memdir watch``).
The callback is the error boundary: an exception it raises is logged and the
watcher keeps running.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

from watchfiles import Change, watch

from memdir.errors import NotFoundError

log = logging.getLogger(__name__)

OnChange = Callable[[set[Path]], None]


def is_markdown(change: Change, path: str) -> bool:
    """The watch filter: only ``*.md`` files count."""
    return path.endswith(".md")


def watch_paths(
    roots: Iterable[Path],
    on_change: OnChange,
    *,
    debounce_ms: int = 500,
    stop_event: threading.Event,
) -> None:
    """Call ``on_change(paths)`` with the changed ``.md`` files until ``stop_event`` is set.

    Changes within ``debounce_ms`` are grouped into one call. Exceptions from
    ``on_change`` are logged (this is the documented boundary) and watching goes on.
    """
    folders = [Path(root) for root in roots]
    missing = [str(folder) for folder in folders if not folder.is_dir()]
    if missing:
        raise NotFoundError(f"cannot watch {missing!r}: not a directory; create it first")
    if not folders:
        raise NotFoundError("no folders to watch; pass at least one workspace root")
    changes_seen = watch(
        *folders,
        watch_filter=is_markdown,
        debounce=debounce_ms,
        stop_event=stop_event,
        raise_interrupt=False,
        rust_timeout=500,
        yield_on_timeout=False,
    )
    for changes in changes_seen:
        paths = {Path(path) for _, path in changes}
        if not paths:
            continue
        try:
            on_change(paths)
        except Exception:  # the callback boundary: log and keep watching
            log.exception("the change handler failed for %d path(s); still watching", len(paths))


class Watcher:
    """Runs ``watch_paths`` in a daemon thread: ``start()``, ``stop()`` (idempotent)."""

    def __init__(self, roots: Iterable[Path], on_change: OnChange, *, debounce_ms: int = 500):
        self.roots = [Path(root) for root in roots]
        self.on_change = on_change
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start watching in a daemon thread (no-op when already running)."""
        if self.running:
            return
        missing = [str(root) for root in self.roots if not root.is_dir()]
        if missing:
            raise NotFoundError(f"cannot watch {missing!r}: not a directory; create it first")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memdir-watcher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and wait for the thread; safe to call twice or before start."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        try:
            watch_paths(
                self.roots, self.on_change, debounce_ms=self.debounce_ms, stop_event=self._stop
            )
        except Exception:  # the thread boundary: a dead watcher must say why in the log
            log.exception("the markdown watcher stopped unexpectedly")

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
