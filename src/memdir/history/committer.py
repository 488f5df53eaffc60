"""Versions are committed off the write path: one committer thread per home and process.

A write hands the bytes it left in each file (read right after it) and its attribution
(taken in the writer's context) to the committer and returns; the committer commits them
one by one, in order, under the home's history lock. So a save never waits for git,
writers do not queue behind each other's commits, and each version holds exactly its
write however late it is committed. A note another process appended to and committed
first is not taken back: that write is recorded as held by the version before (an empty
commit with its own attribution), so no write loses its version. Reading the
history, ``flush`` and closing the memory wait for what is queued; a process that dies
first leaves the files written, and the next sync records them as changed outside. A write
under way in this process is never taken for an edit made outside: recording those (a sync,
the watcher) gives up when a write began meanwhile, and the next sync picks them up.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import MemdirError
from memdir.history.attribution import Attribution
from memdir.history.repo import HomeHistory

log = logging.getLogger(__name__)
FLUSH_TIMEOUT_S = 120.0
IDLE_EXIT_S = 5.0


@dataclass(frozen=True)
class _Pending:
    contents: dict[str, bytes | None]  # home-relative path -> bytes after the write
    who: Attribution
    appended: bool
    folders: tuple[str, ...] = ()  # or: folders to record as they are when committed


class Committer:
    """Commits the versions of one home, in the order they were submitted."""

    def __init__(self, repo: HomeHistory) -> None:
        self.repo = repo
        self._queue: deque[_Pending] = deque()
        self._cond = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None
        self._writing = 0  # writes of this process under way (between begin and end)
        self._generation = 0  # how many writes have begun

    def begin(self) -> None:
        """A write starts: until ``end``, an outside edit is not told from it."""
        with self._cond:
            self._writing += 1
            self._generation += 1

    def end(self) -> None:
        """The write that began has submitted its version (or failed)."""
        with self._cond:
            self._writing -= 1
            self._cond.notify_all()

    def quiet(self) -> int | None:
        """The writes begun so far when none is under way or queued; else None."""
        with self._cond:
            busy = self._writing or self._queue or self._busy
            return None if busy else self._generation

    def still_quiet(self, generation: int) -> bool:
        """No write of this process began since ``quiet`` gave ``generation``."""
        with self._cond:
            return not (self._writing or self._queue) and self._generation == generation

    def submit(self, contents: dict[str, bytes | None], who: Attribution, appended: bool) -> None:
        with self._cond:
            self._queue.append(_Pending(contents, who, appended))
            self._start()
            self._cond.notify_all()

    def submit_folders(self, folders: list[str], who: Attribution) -> None:
        """Record ``folders`` as they are when the commit runs (after a curation)."""
        with self._cond:
            self._queue.append(_Pending({}, who, False, tuple(folders)))
            self._start()
            self._cond.notify_all()

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="memdir-history", daemon=True)
            self._thread.start()

    def flush(self, timeout: float = FLUSH_TIMEOUT_S) -> None:
        """Wait until everything submitted so far is committed (or ``timeout``)."""
        with self._cond:
            if not self._cond.wait_for(lambda: not self._queue and not self._busy, timeout):
                log.warning("versions of %s still queued after %.0f s", self.repo.root, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda: bool(self._queue), IDLE_EXIT_S):
                    self._thread = None
                    return
                item = self._queue.popleft()
                self._busy = True
            try:
                if item.folders:
                    self.repo.record(item.folders, item.who)
                else:
                    self.repo.record_snapshot(item.contents, item.who, item.appended)
            except (MemdirError, OSError) as exc:  # the write stands; only its version is lost
                what = ", ".join(item.folders or tuple(item.contents))
                log.warning("could not record a version of %s: %s", what, exc)
            except Exception:  # boundary: the committer must outlive any one commit
                log.exception("recording a version of %s failed", ", ".join(item.contents))
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()


_committers: dict[Path, Committer] = {}
_lock = threading.Lock()


def committer_for(repo: HomeHistory) -> Committer:
    """The committer of ``repo``'s home in this process."""
    with _lock:
        found = _committers.get(repo.root)
        if found is None:
            found = _committers[repo.root] = Committer(repo)
        return found


def flush_all() -> None:
    """Wait for every home's queued versions (at exit)."""
    for committer in list(_committers.values()):
        committer.flush()


atexit.register(flush_all)
