"""Where other tools keep their Markdown memories, and where each file goes in a workspace.

Each layout maps the files of one tool's memory folder to workspace-relative paths of a
memdir agent workspace (docs/history.md, "Memories of other tools"):

- ``claude-code``: a Claude Code project's auto memory, ``~/.claude/projects/<project>/``
  or its ``memory/`` folder. ``memory/MEMORY.md`` (the index Claude Code loads) becomes
  ``MEMORY.md``; the topic files beside it (``debugging.md``) go to ``memory/``; a
  ``CLAUDE.md`` (the instructions) becomes ``AGENTS.md``.
- ``openclaw``: an OpenClaw workspace, the layout memdir keeps itself: AGENTS.md, SOUL.md,
  IDENTITY.md, TOOLS.md, HEARTBEAT.md, MEMORY.md, ``memory/YYYY-MM-DD.md``, ``skills/``
  and any other notes keep their paths. USER.md is the global workspace's (one human for
  every agent), so it comes as ``imported/USER.md`` to merge by hand; BOOTSTRAP.md (a
  first-run ritual already done) is left out.
- ``codex``: Codex's memories folder (``~/.codex/memories``). ``MEMORY.md`` and
  ``skills/`` keep their paths; ``memory_summary.md``, ``raw_memories.md`` and
  ``rollout_summaries/*.md`` go under ``memory/``.

Files that are not Markdown (a skill's scripts, Codex's jsonl rollouts) are listed as
skipped; hidden files and folders (``.git``) are not looked at.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import InvalidInputError, NotFoundError
from memdir.workspace.paths import MARKDOWN_SUFFIX


@dataclass(frozen=True)
class Planned:
    """One file of the other tool's folder: its path there and its path in the workspace
    (``None``: left out, ``why`` says why)."""

    source: str
    target: str | None
    why: str = ""


def _files(root: Path) -> Iterator[str]:
    """Relative POSIX paths of the files under ``root``, sorted, hidden entries skipped;
    symbolic links are not followed (a link could lead anywhere on the machine)."""
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        base = Path(folder)
        for name in sorted(names):
            path = base / name
            if not name.startswith(".") and path.is_file() and not path.is_symlink():
                yield path.relative_to(root).as_posix()


def _markdown(relative: str) -> bool:
    return relative.endswith(MARKDOWN_SUFFIX)


NOT_MARKDOWN = "not Markdown"


def claude_code(folder: Path) -> list[Planned]:
    planned: list[Planned] = []
    for top in ("CLAUDE.md", ".claude/CLAUDE.md"):
        if (folder / top).is_file():
            planned.append(Planned(top, "AGENTS.md"))
            break
    if (folder / "memory").is_dir():
        memory = folder / "memory"
    elif (folder / "MEMORY.md").is_file():
        memory = folder  # the memory folder itself
    else:
        return planned  # a project with a CLAUDE.md only: its other files are not memory
    prefix = "" if memory == folder else "memory/"
    for relative in _files(memory):
        source = prefix + relative
        if relative == "CLAUDE.md" and memory == folder:
            continue  # taken above
        if not _markdown(relative):
            planned.append(Planned(source, None, NOT_MARKDOWN))
        elif relative == "MEMORY.md":
            planned.append(Planned(source, "MEMORY.md"))
        else:
            planned.append(Planned(source, "memory/" + relative))
    return planned


def openclaw(folder: Path) -> list[Planned]:
    planned: list[Planned] = []
    for relative in _files(folder):
        if not _markdown(relative):
            planned.append(Planned(relative, None, NOT_MARKDOWN))
        elif relative == "BOOTSTRAP.md":
            planned.append(Planned(relative, None, "the first-run ritual, already done"))
        elif relative == "USER.md":
            planned.append(Planned(relative, "imported/USER.md"))
        else:
            planned.append(Planned(relative, relative))
    return planned


def codex(folder: Path) -> list[Planned]:
    planned: list[Planned] = []
    for relative in _files(folder):
        if not _markdown(relative):
            planned.append(Planned(relative, None, NOT_MARKDOWN))
        elif relative == "MEMORY.md" or relative.startswith("skills/"):
            planned.append(Planned(relative, relative))
        else:
            planned.append(Planned(relative, "memory/" + relative))
    return planned


LAYOUTS: dict[str, Callable[[Path], list[Planned]]] = {
    "claude-code": claude_code,
    "openclaw": openclaw,
    "codex": codex,
}
"""Each tool memdir imports from, and how its folder maps onto a workspace."""

SIGNS = {
    "claude-code": ("MEMORY.md", "memory/MEMORY.md", "CLAUDE.md"),
    "openclaw": ("AGENTS.md", "SOUL.md", "MEMORY.md", "memory"),
    "codex": ("MEMORY.md", "memory_summary.md", "raw_memories.md", "rollout_summaries"),
}
"""Paths one of which a folder of that tool holds: a folder with none is refused."""


def plan(tool: str, folder: Path) -> list[Planned]:
    """Where each file of ``tool``'s memory ``folder`` goes in a workspace."""
    if tool not in LAYOUTS:
        raise InvalidInputError(f"unknown tool {tool!r}; use one of: {', '.join(LAYOUTS)}")
    if not folder.is_dir():
        raise NotFoundError(f"no folder at {folder}; give the folder of the {tool} memories")
    if not any((folder / sign).exists() for sign in SIGNS[tool]):
        signs = ", ".join(SIGNS[tool])
        raise InvalidInputError(
            f"{folder} does not look like a {tool} memory folder (it has none of {signs}); "
            "give the folder that holds them"
        )
    return LAYOUTS[tool](folder)
