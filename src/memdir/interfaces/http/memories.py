"""The open ``Memory`` of each agent, shared by the server's threads: a bounded LRU.

Every distinct agent a request names needs a ``Memory`` (a dozen open files and
about a megabyte each). ``AgentMemories`` keeps at most ``max_open`` of them:
opening another closes the least recently used one that no request is using.
A request holds a *lease* on the ``Memory`` it works with (``lease()``, or
``acquire()``/``release()`` around an HTTP request), so nothing is closed under
it; while more agents are leased at once than ``max_open`` (more concurrent
requests than that, each for another agent), the cache holds them all and
shrinks back as the leases end. The default agent's ``Memory`` is never evicted.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memdir.memory import Memory

log = logging.getLogger(__name__)

MemoryOpener = Callable[[str | None], "Memory"]
DEFAULT_MAX_OPEN = 32


@dataclass
class _Open:
    memory: Memory
    leases: int = 0


class AgentMemories:
    """A thread-safe, bounded cache of open ``Memory`` objects keyed by agent id.

    ``None`` (and an empty id) means the server's default agent. An id that fails
    validation raises ``InvalidAgentIdError`` from the opener and is not cached.
    """

    def __init__(
        self,
        open_memory: MemoryOpener,
        default_agent: str | None = None,
        max_open: int = DEFAULT_MAX_OPEN,
    ) -> None:
        if max_open < 1:
            raise ValueError(f"max_open must be at least 1, got {max_open}")
        self._open = open_memory
        self.default_agent = default_agent
        self.max_open = max_open
        self._entries: OrderedDict[str | None, _Open] = OrderedDict()
        self._lock = threading.Lock()
        self.evicted = 0  # how many were closed to make room (for the benchmark)

    def acquire(self, agent: str | None = None) -> Memory:
        """The ``Memory`` of ``agent``, leased: it stays open until :meth:`release`."""
        return self._get(agent, lease=True)

    def release(self, agent: str | None = None) -> None:
        """End a lease taken by :meth:`acquire` (the same ``agent``)."""
        key = agent or self.default_agent
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.leases > 0:
                entry.leases -= 1
            closing = self._evict_locked()
        _close(closing)

    @contextmanager
    def lease(self, agent: str | None = None) -> Iterator[Memory]:
        """``with memories.lease(agent) as memory:`` - open for the whole block."""
        memory = self.acquire(agent)
        try:
            yield memory
        finally:
            self.release(agent)

    def get(self, agent: str | None = None) -> Memory:
        """The ``Memory`` of ``agent`` without a lease: safe for the default agent (never
        evicted) and inside a request that leased ``agent``; elsewhere use :meth:`lease`."""
        return self._get(agent, lease=False)

    def _get(self, agent: str | None, lease: bool) -> Memory:
        key = agent or self.default_agent
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = _Open(self._open(key))
                self._entries[key] = entry
            self._entries.move_to_end(key)
            if lease:
                entry.leases += 1
            memory = entry.memory
            closing = self._evict_locked()
        _close(closing)
        return memory

    def _evict_locked(self) -> list[Memory]:
        """Take the least recently used unleased entries out until ``max_open`` are left."""
        closing: list[Memory] = []
        if len(self._entries) <= self.max_open:
            return closing
        for key in list(self._entries):
            if len(self._entries) <= self.max_open:
                break
            entry = self._entries[key]
            if entry.leases == 0 and key != self.default_agent:
                del self._entries[key]
                closing.append(entry.memory)
        self.evicted += len(closing)
        return closing

    def open_unshared(self, agent: str | None = None) -> Memory:
        """A ``Memory`` of its own (own connections), not cached: the caller closes it."""
        return self._open(agent or self.default_agent)

    def opened(self) -> list[Memory]:
        with self._lock:
            return [entry.memory for entry in self._entries.values()]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def close(self) -> None:
        with self._lock:
            entries, self._entries = list(self._entries.values()), OrderedDict()
        _close([entry.memory for entry in entries])


def _close(memories: list[Memory]) -> None:
    for memory in memories:
        try:
            memory.close()
        except Exception:  # boundary: one failing close must not keep the others open
            log.exception("closing the memory of %s failed", memory.agent_id or "global")
