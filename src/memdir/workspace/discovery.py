"""Finding the Markdown files of a workspace.

Walks folders recursively, follows symlinks that stay inside the workspace and
skips (with a log line) those that point outside it, and files whose path the tools would
refuse (``validate_relative_path``: control characters, invisible ones). Hidden entries (names
starting with '.') are skipped: they hold temp files, locks and tool folders
such as ``.git``. Results are sorted by their relative POSIX path.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from memdir.errors import InvalidPathError
from memdir.workspace.paths import MARKDOWN_SUFFIX, validate_relative_path

logger = logging.getLogger(__name__)

MEMORY_FILE = "MEMORY.md"
LOWERCASE_MEMORY_FILE = "memory.md"
MEMORY_FOLDERS = ("memory", "learnings")
INSTRUCTION_FILES = frozenset(
    {"AGENTS.md", "BOOTSTRAP.md", "HEARTBEAT.md", "SOUL.md", "IDENTITY.md"}
)
"""Top-level files that tell the agent how to work and who it is, not what it knows (the
prompt carries them whole): never indexed."""
INSTRUCTION_FOLDERS = ("skills",)
"""Folders of instructions (skills the prompt lists), not memory: never indexed unless
named in ``extra``."""


class MemoryFile(NamedTuple):
    """A Markdown file found in a workspace: relative POSIX path and absolute path."""

    relpath: str
    path: Path


def _inside(real_root: Path, path: Path) -> Path | None:
    """Return the real location of ``path`` if it lies inside the workspace."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        logger.warning("skipping %s: it cannot be resolved", path)
        return None
    if real.is_relative_to(real_root):
        return real
    logger.warning("skipping %s: it is a symlink pointing outside the workspace", path)
    return None


MAX_FOLDER_DEPTH = 64
"""Folders deeper than this are skipped (with a warning): a 1,000-level folder must not
take the listing, the sync and the search of the whole workspace down with it."""


def _walk(
    real_root: Path,
    folder: Path,
    real_folder: Path,
    relative: str,
    seen: set[Path],
    depth: int = 0,
) -> Iterator[MemoryFile]:
    """The Markdown files under ``folder`` (whose real location is ``real_folder``).

    Only symlinks are resolved: any other entry's real location is its real folder's
    plus its name, and ``os.scandir`` already knows its type (a walk of a folder of
    many notes made one ``realpath``, a system call per path component, per file).
    """
    if depth >= MAX_FOLDER_DEPTH:
        logger.warning("skipping folder %s: deeper than %d levels", relative, MAX_FOLDER_DEPTH)
        return
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as exc:
        logger.warning("skipping folder %s: %s", folder, exc)
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = folder / entry.name
        child = f"{relative}/{entry.name}" if relative else entry.name
        if entry.is_symlink():
            real = _inside(real_root, path)
            if real is None:
                continue
            is_dir, is_file = real.is_dir(), real.is_file()
        else:
            real = real_folder / entry.name
            is_dir, is_file = entry.is_dir(), entry.is_file()
        if is_dir:
            if real not in seen:  # a symlink loop would otherwise never end
                seen.add(real)
                yield from _walk(real_root, path, real, child, seen, depth + 1)
        elif is_file and entry.name.endswith(MARKDOWN_SUFFIX) and _usable(child):
            yield MemoryFile(child, path)


_PLAIN = re.compile(r"[A-Za-z0-9_./ -]+")
"""Most paths: nothing in them can disguise a name or forge a line, so they skip the full
check (6 us a path: 60 ms a listing of 10,000 notes)."""


def _usable(relative: str) -> bool:
    """Whether a file's path is one the tools accept: a name with a line break or a bidi
    override, made outside memdir, would forge lines of a listing or a citation that
    ``memory_get`` could not read back."""
    if _PLAIN.fullmatch(relative):
        return True
    try:
        validate_relative_path(relative)
    except InvalidPathError as exc:
        logger.warning("skipping %r: %s (rename the file)", relative, exc)
        return False
    return True


def list_markdown(root: Path, folder: str = "") -> list[MemoryFile]:
    """Every ``.md`` file under ``root/folder`` (the whole workspace by default)."""
    base = root.absolute()
    real_root = base.resolve()
    start = base / folder if folder else base
    real_start = _inside(real_root, start)
    if real_start is None or not real_start.is_dir():
        return []
    found = _walk(real_root, start, real_start, folder, {real_start})
    return sorted(found, key=lambda item: item.relpath)


def is_memory_path(relative: str, extra: Sequence[str] = ()) -> bool:
    """Whether ``discover_memory_files(root, extra)`` would list this workspace-relative path."""
    parts = relative.split("/")
    if any(part.startswith(".") for part in parts) or not relative.endswith(MARKDOWN_SUFFIX):
        return False
    if any(
        relative == clean or relative.startswith(clean + "/")
        for clean in (path.strip("/") for path in extra)
    ):
        return True
    return relative not in INSTRUCTION_FILES and parts[0] not in INSTRUCTION_FOLDERS


def _top_file(base: Path, name: str) -> MemoryFile | None:
    top = base / name
    real_top = _inside(base.resolve(), top)
    if real_top is None or not real_top.is_file():
        return None
    return MemoryFile(name, top)


def discover_memory_files(root: Path, extra: Sequence[str] = ()) -> list[MemoryFile]:
    """Every Markdown file of the workspace that holds memory, sorted: MEMORY.md, USER.md,
    TOOLS.md, ``memory/**``, ``learnings/**``, notes in any folder; not the instruction and
    persona files (AGENTS.md, BOOTSTRAP.md, HEARTBEAT.md, SOUL.md, IDENTITY.md) nor
    ``skills/``, unless ``extra`` names them.

    ``memory.md`` counts as well when it is not MEMORY.md itself (a case-insensitive
    file system names one file both ways). ``extra`` holds workspace-relative folders
    (searched recursively) and ``.md`` files, already validated by the caller; one that
    does not exist adds nothing.
    """
    base = root.absolute()
    found = {
        item.relpath: item for item in list_markdown(base) if is_memory_path(item.relpath, extra)
    }
    upper, lower = _top_file(base, MEMORY_FILE), _top_file(base, LOWERCASE_MEMORY_FILE)
    if upper is not None and lower is not None and _same_file(upper.path, lower.path):
        found.pop(LOWERCASE_MEMORY_FILE, None)
    for path in extra:
        clean = path.strip("/")
        if clean.endswith(MARKDOWN_SUFFIX) and (item := _top_file(base, clean)) is not None:
            found[item.relpath] = item
        else:
            found.update((item.relpath, item) for item in list_markdown(base, clean))
    return sorted(found.values(), key=lambda item: item.relpath)


def _same_file(first: Path, second: Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False
