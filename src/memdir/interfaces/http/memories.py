"""One ``Memory`` per agent, opened on first use and shared by the server's threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memdir.memory import Memory

MemoryOpener = Callable[[str | None], "Memory"]


class AgentMemories:
    """A thread-safe cache of open ``Memory`` objects keyed by agent id.

    ``None`` (and an empty id) means the server's default agent. An id that fails
    validation raises ``InvalidAgentIdError`` from the opener and is not cached.
    """

    def __init__(self, open_memory: MemoryOpener, default_agent: str | None = None) -> None:
        self._open = open_memory
        self.default_agent = default_agent
        self._open_memories: dict[str | None, Memory] = {}
        self._lock = threading.Lock()

    def get(self, agent: str | None = None) -> Memory:
        key = agent or self.default_agent
        with self._lock:
            memory = self._open_memories.get(key)
            if memory is None:
                memory = self._open(key)
                self._open_memories[key] = memory
            return memory

    def open_unshared(self, agent: str | None = None) -> Memory:
        """A ``Memory`` of its own (own connections), not cached: the caller closes it."""
        return self._open(agent or self.default_agent)

    def opened(self) -> list[Memory]:
        with self._lock:
            return list(self._open_memories.values())

    def close(self) -> None:
        with self._lock:
            memories, self._open_memories = list(self._open_memories.values()), {}
        for memory in memories:
            memory.close()
