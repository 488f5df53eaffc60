"""How fresh the index is for a search: what this process wrote, and when it last synced.

The contract (docs/architecture.md, "Freshness"): a search sees at once every
write through memdir (a file written, edited or deleted, a daily-note append, a
save: the write indexes its file before it returns, and the index is shared by every
process; if that fails, the next search of the writing process indexes it first);
edits by hand and files written by other programs are seen once a full incremental
sync has run: the watcher of ``memdir serve`` runs one after each burst of changes;
a search runs one itself first when this process never synced the workspace, or
(without a watcher) when the last is older than ``index.refresh_seconds``.

By default one ``Freshness`` per home is shared by every ``Memory`` of the process
(the REST server holds one per agent, and its watcher one of its own), so a write
through any of them is seen by the searches of all; a CLI command keeps its own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from memdir.index.sync import SourceFile


class Freshness:
    """Files written and not indexed yet, and the time of each source's last full sync."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        # (source, path) -> (file, when written, claimed by an indexing thread)
        self._pending: dict[tuple[str, str], tuple[SourceFile, float, bool]] = {}
        self._synced: dict[str, float] = {}  # source -> time.monotonic() of its last full sync
        self._watchers = 0

    def written(self, file: SourceFile) -> None:
        """``file`` was written, edited or deleted through this process."""
        with self._changed:
            self._pending[(file.source, file.path)] = (file, time.monotonic(), False)

    def claim(self, sources: Iterable[str], before: float) -> list[SourceFile] | None:
        """Pending files of ``sources`` written before ``before`` for the caller to index
        (then ``indexed`` or ``released``); waits while other threads index such files.

        Returns [] when nothing written before ``before`` is left to index. A search
        thus waits only for writes that preceded it, never for later ones.
        """
        wanted = set(sources)
        with self._changed:
            while True:
                due = {k: v for k, v in self._pending.items() if k[0] in wanted and v[1] < before}
                mine = [k for k, v in due.items() if not v[2]]
                if mine:
                    for key in mine:
                        file, when, _ = self._pending[key]
                        self._pending[key] = (file, when, True)
                    return [self._pending[key][0] for key in mine]
                if not due:
                    return []
                self._changed.wait()

    def indexed(self, files: Iterable[SourceFile]) -> None:
        """Claimed files are in the index (unless written again meanwhile: still pending)."""
        self._settle(files, keep=False)

    def released(self, files: Iterable[SourceFile]) -> None:
        """Claimed files could not be indexed: pending again for the next search."""
        self._settle(files, keep=True)

    def _settle(self, files: Iterable[SourceFile], keep: bool) -> None:
        with self._changed:
            for file in files:
                key = (file.source, file.path)
                entry = self._pending.get(key)
                if entry is not None and entry[2]:
                    if keep:
                        self._pending[key] = (entry[0], entry[1], False)
                    else:
                        del self._pending[key]
            self._changed.notify_all()

    def synced(self, sources: Iterable[str], started: float) -> None:
        """A full sync of ``sources`` that began at ``started`` (monotonic) has finished:
        it indexed what was written before it began (not what was written during it)."""
        done = set(sources)
        with self._changed:
            for source in done:
                self._synced[source] = max(self._synced.get(source, 0.0), started)
            self._pending = {
                key: entry
                for key, entry in self._pending.items()
                if key[0] not in done or entry[1] >= started or entry[2]
            }
            self._changed.notify_all()

    def stale(self, sources: Iterable[str], max_age: float) -> bool:
        """Whether a search must run a full sync first: some source was never synced by
        this process, or (when no watcher keeps the index fresh) its last full sync began
        more than ``max_age`` seconds ago."""
        now = time.monotonic()
        with self._changed:
            if self._watchers:
                return any(s not in self._synced for s in sources)
            return any(now - self._synced.get(s, -1e18) > max_age for s in sources)

    def watched(self, running: bool) -> None:
        """A watcher that syncs after every change started (True) or stopped (False)."""
        with self._changed:
            self._watchers += 1 if running else -1


def index_pending(
    freshness: Freshness, sources: Sequence[str], index: Callable[[list[SourceFile]], object]
) -> None:
    """Before a search: index (with ``index``) what this process wrote to ``sources``
    before now, waiting for files other threads are indexing; later writes are not waited for."""
    started = time.monotonic()
    while files := freshness.claim(sources, started):
        try:
            index(files)
        except BaseException:
            freshness.released(files)
            raise
        freshness.indexed(files)


_REGISTRY: dict[Path, Freshness] = {}
_REGISTRY_LOCK = threading.Lock()


def freshness_of(home: Path) -> Freshness:
    """The ``Freshness`` of ``home`` in this process."""
    key = home.absolute()
    with _REGISTRY_LOCK:
        return _REGISTRY.setdefault(key, Freshness())
