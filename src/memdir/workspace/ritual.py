"""The first-run ritual: ``BOOTSTRAP.md`` guides a workspace's first conversation.

A brand-new workspace gets ``BOOTSTRAP.md`` when it is seeded (the global one asks the
agent to meet its human, an agent's one to agree on its role). While the file exists the
system prompt carries it. The ritual ends when the file is deleted, which happens

- on request: ``finish_ritual`` (the ``memory_finish_ritual`` tool, ``memdir ritual
  finish``, ``POST /api/v1/ritual/finish``), whatever the state of the other files;
- by itself, once the files the ritual is about differ from the templates they were
  seeded from: IDENTITY.md and USER.md in the global workspace, the agent's own
  IDENTITY.md in an agent workspace (``ritual_files_done``).

The state lives in the files only, so every interface and process sees the same ritual.
"""

from __future__ import annotations

import logging
from pathlib import Path

from memdir.workspace.atomic import fsync_directory, read_markdown
from memdir.workspace.locking import lock_file
from memdir.workspace.seeding import BOOTSTRAP_FILE, load_template

logger = logging.getLogger(__name__)

GLOBAL_RITUAL_FILES = ("IDENTITY.md", "USER.md")
AGENT_RITUAL_FILES = ("IDENTITY.md",)


def ritual_active(root: Path) -> bool:
    """Whether ``root`` holds its own BOOTSTRAP.md (it is never read from another workspace)."""
    return (root / BOOTSTRAP_FILE).is_file()


def _changed_from_template(path: Path, name: str) -> bool:
    if not path.is_file():
        return False
    try:
        text = read_markdown(path, strict=False)
    except OSError:
        return False
    return text.strip() != load_template(name).strip()


def ritual_files_done(root: Path, is_agent: bool) -> bool:
    """Whether the files the ritual asks for were written (differ from their templates)."""
    names = AGENT_RITUAL_FILES if is_agent else GLOBAL_RITUAL_FILES
    return all(_changed_from_template(root / name, name) for name in names)


def finish_ritual(root: Path) -> bool:
    """Delete ``root``'s BOOTSTRAP.md; True if it was there (False: no ritual to finish)."""
    path = root / BOOTSTRAP_FILE
    try:
        with lock_file(path):
            path.unlink()
    except FileNotFoundError:
        return False
    fsync_directory(root)
    logger.info("first-run ritual finished: deleted %s", path)
    return True
