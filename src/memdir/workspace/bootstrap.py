"""Loading bootstrap files with agent-over-global precedence.

An agent workspace may override any bootstrap file; a file it lacks is read
from the global workspace. USER.md is the exception: there is one human, so it
always comes from the global workspace.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memdir.errors import InvalidInputError, InvalidPathError
from memdir.workspace.atomic import read_markdown
from memdir.workspace.paths import resolve_inside

logger = logging.getLogger(__name__)

Origin = Literal["agent", "global", "missing"]

PROMPT_FILES = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md", "MEMORY.md")
"""Bootstrap files injected into the system prompt, in prompt order."""

FALLBACK_FILES = (*PROMPT_FILES, "HEARTBEAT.md")
"""Names an agent workspace reads from the global workspace when it has none.

BOOTSTRAP.md is not among them: the first-run ritual belongs to the workspace
that was created brand-new, not to every agent that shares it.
"""

GLOBAL_ONLY_FILES = ("USER.md",)
LOWERCASE_MEMORY = "memory.md"
"""Read in place of MEMORY.md when a workspace has only the lower-case name."""


@dataclass(frozen=True)
class BootstrapFile:
    """One bootstrap file as loaded: where it came from and its text (None if missing)."""

    name: str
    path: Path | None
    content: str | None
    origin: Origin


def _read_candidate(root: Path, name: str) -> tuple[Path, str] | None:
    try:
        path = resolve_inside(root, name)
    except InvalidPathError as exc:
        logger.warning("not loading %s from %s: %s", name, root, exc)
        return None
    if not path.is_file():
        return None
    try:
        return path, read_markdown(path, strict=False)
    except OSError as exc:
        logger.warning("cannot read %s: %s", path, exc)
        return None


def load_bootstrap_file(global_root: Path, agent_root: Path | None, name: str) -> BootstrapFile:
    """Load ``name``: the agent's copy first, then the global one (USER.md: global only)."""
    if name not in FALLBACK_FILES and name != "BOOTSTRAP.md":
        known = ", ".join((*FALLBACK_FILES, "BOOTSTRAP.md"))
        raise InvalidInputError(f"{name!r} is not a bootstrap file; use one of: {known}")
    candidates: list[tuple[Path, Origin]] = []
    if agent_root is not None and name not in GLOBAL_ONLY_FILES:
        candidates.append((agent_root, "agent"))
    if agent_root is None or name in FALLBACK_FILES:
        candidates.append((global_root, "global"))
    names = (name, LOWERCASE_MEMORY) if name == "MEMORY.md" else (name,)
    for root, origin in candidates:
        for candidate in names:
            found = _read_candidate(root, candidate)
            if found is not None:
                return BootstrapFile(candidate, found[0], found[1], origin)
    return BootstrapFile(name, None, None, "missing")


def load_prompt_file(global_root: Path, agent_root: Path | None, path: str) -> BootstrapFile:
    """A file named in prompt.toml, read as ``memory_read_file`` reads it.

    Bootstrap names fall back as ``load_bootstrap_file`` says; any other Markdown
    file comes from the workspace itself (an agent's own folder, or the global one).
    """
    if path in FALLBACK_FILES or path == "BOOTSTRAP.md":
        return load_bootstrap_file(global_root, agent_root, path)
    root = global_root if agent_root is None else agent_root
    origin: Origin = "global" if agent_root is None else "agent"
    found = _read_candidate(root, path)
    if found is None:
        return BootstrapFile(path, None, None, "missing")
    return BootstrapFile(path, found[0], found[1], origin)
