"""The first-run ritual in the chat: BOOTSTRAP.md guides the agent's first conversation.

A brand-new workspace holds ``BOOTSTRAP.md`` (the global one, and each new agent's own).
While it exists the system prompt carries it (``Memory.system_prompt``), so the chat,
``memdir prompt``, MCP and REST hosts all see the same ritual. It ends when the file is
deleted: by the ``memory_finish_ritual`` tool, or by ``Memory`` itself once the files the
ritual asks for are written (``memdir.workspace.ritual``). ``BootstrapRitual`` only
notices the end, so the chat can say so.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from memdir.workspace import BOOTSTRAP_FILE
from memdir.workspace.seeding import is_brand_new

if TYPE_CHECKING:
    from memdir.memory import Memory

logger = logging.getLogger(__name__)

__all__ = ["BOOTSTRAP_FILE", "BootstrapRitual", "prepare_workspace"]


def prepare_workspace(memory: Memory) -> list[str]:
    """Seed the workspace when it is brand-new (then BOOTSTRAP.md starts the ritual)."""
    if memory.workspace.root.is_dir() and not is_brand_new(memory.workspace.root):
        return []
    return memory.init()


class BootstrapRitual:
    """Watches one workspace's ritual: whether it is active, and when it ended."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._was_active = self.active

    @property
    def active(self) -> bool:
        """Whether BOOTSTRAP.md is in this workspace (never read from the global one)."""
        return self.memory.ritual_active

    def finish_if_done(self) -> bool:
        """True once, when the ritual ended since the last call (by a tool or a write)."""
        ended = self._was_active and not self.active
        self._was_active = self.active
        if ended:
            logger.info("first-run ritual complete: %s is gone", BOOTSTRAP_FILE)
        return ended
