"""The first-run ritual: BOOTSTRAP.md guides the agent's first conversation.

A brand-new global workspace holds ``BOOTSTRAP.md``. While it exists the chat
agent appends it to the system prompt with an instruction to follow it. The
memory tools cannot delete files (the tool list of DESIGN.md is fixed), so the
ritual is finished by the chat loop: once the agent has written both
``IDENTITY.md`` and ``USER.md`` in this session (``memory_write_file`` or
``memory_edit_file``, successfully), the loop deletes ``BOOTSTRAP.md``.
"""

from __future__ import annotations

import logging
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from memdir.errors import NotFoundError
from memdir.workspace.seeding import is_brand_new

if TYPE_CHECKING:
    from memdir.agent.toolbox import ToolRun
    from memdir.memory import Memory

logger = logging.getLogger(__name__)

BOOTSTRAP_FILE = "BOOTSTRAP.md"
RITUAL_FILES = frozenset({"IDENTITY.md", "USER.md"})
WRITE_TOOLS = frozenset({"memory_write_file", "memory_edit_file"})
RITUAL_INSTRUCTION = """\
## BOOTSTRAP.md (first run)
This is your first conversation in this workspace. Follow BOOTSTRAP.md below. Write \
IDENTITY.md and USER.md with memory_write_file or memory_edit_file (and adjust SOUL.md \
with your human). You cannot delete files: once IDENTITY.md and USER.md are written, \
BOOTSTRAP.md is deleted for you.

"""


def prepare_workspace(memory: Memory) -> list[str]:
    """Seed the workspace when it is brand-new (then BOOTSTRAP.md starts the ritual)."""
    if memory.workspace.root.is_dir() and not is_brand_new(memory.workspace.root):
        return []
    return memory.init()


class BootstrapRitual:
    """Tracks the ritual in one workspace: prompt text while active, deletion when done."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.written: set[str] = set()

    @property
    def active(self) -> bool:
        """Whether BOOTSTRAP.md is in this workspace (never read from the global one)."""
        return (self.memory.workspace.root / BOOTSTRAP_FILE).is_file()

    def prompt_section(self) -> str:
        """The text to append to the system prompt, or "" when there is no ritual."""
        if not self.active:
            return ""
        try:
            text = self.memory.read_file(BOOTSTRAP_FILE)
        except NotFoundError:
            return ""  # deleted meanwhile (by hand or by another process)
        return RITUAL_INSTRUCTION + text.strip() + "\n"

    def observe(self, run: ToolRun) -> None:
        """Note a successful write of IDENTITY.md or USER.md."""
        if not run.ok or run.call.name not in WRITE_TOOLS:
            return
        path = run.call.arguments.get("path")
        if isinstance(path, str) and str(PurePosixPath(path)) in RITUAL_FILES:
            self.written.add(str(PurePosixPath(path)))

    def finish_if_done(self) -> bool:
        """Delete BOOTSTRAP.md once both files were written; True when it was deleted now."""
        if not self.active or not self.written >= RITUAL_FILES:
            return False
        try:
            self.memory.delete_file(BOOTSTRAP_FILE)
        except NotFoundError:
            return False
        logger.info("first-run ritual complete: deleted %s", BOOTSTRAP_FILE)
        return True
