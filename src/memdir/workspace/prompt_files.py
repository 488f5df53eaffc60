"""Which workspace files enter the system prompt, and in what order: ``prompt.toml``.

A workspace may hold a ``prompt.toml`` that a person edits like any other file::

    # Which files enter the system prompt, and in what order.
    [files."MEMORY.md"]
    enabled = false          # leave it out of the prompt

    [files."notes/style.md"]  # any Markdown file of the workspace
    enabled = true
    sort_order = 65          # between TOOLS.md (50) and MEMORY.md (60)

Without one, the bootstrap files go in DESIGN.md's order: BOOTSTRAP.md (only while the
first-run ritual lasts) 0, AGENTS.md 10, SOUL.md 20, IDENTITY.md 30, USER.md 40,
TOOLS.md 50, MEMORY.md 60. A file named in ``prompt.toml`` takes its settings from there
(``enabled`` defaults to true, ``sort_order`` to the default's, else 100). An agent
workspace reads the global ``prompt.toml`` first and its own over it, file by file.
Files go in by ``sort_order``, ties in default order, then by path.

``set_prompt_file`` changes one entry and keeps the rest of the file, comments and all
(``tomlkit``), so a file edited by hand and by memdir stays readable.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit

from memdir.errors import InvalidInputError
from memdir.workspace.atomic import read_markdown, write_atomic
from memdir.workspace.locking import lock_file
from memdir.workspace.paths import validate_relative_path

logger = logging.getLogger(__name__)

PROMPT_SETTINGS_FILE = "prompt.toml"
DEFAULT_ORDER: Mapping[str, int] = {
    "BOOTSTRAP.md": 0,
    "AGENTS.md": 10,
    "SOUL.md": 20,
    "IDENTITY.md": 30,
    "USER.md": 40,
    "TOOLS.md": 50,
    "MEMORY.md": 60,
}
OTHER_FILE_ORDER = 100
MIN_ORDER, MAX_ORDER = -10_000, 10_000
HEADER = """\
# Which workspace files enter the system prompt, and in what order (memdir).
# [files."<path>"] takes enabled = true|false and sort_order = <number>; lower goes first.
# Defaults: BOOTSTRAP.md 0, AGENTS.md 10, SOUL.md 20, IDENTITY.md 30, USER.md 40,
# TOOLS.md 50, MEMORY.md 60; other files 100.
"""

Origin = Literal["default", "global", "agent"]


@dataclass(frozen=True)
class PromptFile:
    """One file the system prompt may carry: whether it does, where, and who said so."""

    path: str
    enabled: bool
    sort_order: int
    origin: Origin = "default"


def _check_order(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"sort_order {value!r} {where} must be a whole number")
    if not MIN_ORDER <= value <= MAX_ORDER:
        raise InvalidInputError(
            f"sort_order {value} {where} is out of range; use {MIN_ORDER} to {MAX_ORDER}"
        )
    return value


def _read_table(root: Path) -> dict[str, Any]:
    path = root / PROMPT_SETTINGS_FILE
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(read_markdown(path))
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInputError(
            f"cannot parse {path}: {exc}; fix the file or delete it (the defaults come back)"
        ) from exc
    files = data.get("files", {})
    if not isinstance(files, dict):
        raise InvalidInputError(f"{path}: 'files' must be a table of [files.\"<path>\"] entries")
    return files


def _entries(root: Path, origin: Origin) -> dict[str, PromptFile]:
    """The entries of ``root``'s prompt.toml (bad entries are logged and skipped)."""
    found: dict[str, PromptFile] = {}
    for raw_path, table in _read_table(root).items():
        where = f"for {raw_path!r} in {root / PROMPT_SETTINGS_FILE}"
        try:
            path = str(validate_relative_path(raw_path))
            if not isinstance(table, dict):
                raise InvalidInputError(f"the entry {where} must be a table")
            enabled = table.get("enabled", True)
            if not isinstance(enabled, bool):
                raise InvalidInputError(f"enabled {where} must be true or false")
            default = DEFAULT_ORDER.get(path, OTHER_FILE_ORDER)
            order = _check_order(table.get("sort_order", default), where)
        except InvalidInputError as exc:
            logger.warning("ignoring a prompt.toml entry: %s", exc)
            continue
        found[path] = PromptFile(path, enabled, order, origin)
    return found


def load_prompt_files(global_root: Path, agent_root: Path | None = None) -> list[PromptFile]:
    """Every file the prompt may carry, in prompt order, disabled ones included."""
    merged = {
        name: PromptFile(name, True, order, "default") for name, order in DEFAULT_ORDER.items()
    }
    merged.update(_entries(global_root, "global"))
    if agent_root is not None:
        merged.update(_entries(agent_root, "agent"))
    rank = {name: index for index, name in enumerate(DEFAULT_ORDER)}
    return sorted(
        merged.values(), key=lambda f: (f.sort_order, rank.get(f.path, len(rank)), f.path)
    )


def set_prompt_file(
    root: Path,
    path: str,
    *,
    enabled: bool | None = None,
    sort_order: int | None = None,
) -> None:
    """Set ``enabled`` and/or ``sort_order`` of ``path`` in ``root``'s prompt.toml."""
    relative = str(validate_relative_path(path))
    if enabled is None and sort_order is None:
        raise InvalidInputError(
            f"nothing to change for {relative!r}: pass enabled and/or sort_order"
        )
    if sort_order is not None:
        _check_order(sort_order, f"for {relative!r}")
    target = root / PROMPT_SETTINGS_FILE
    root.mkdir(parents=True, exist_ok=True)
    with lock_file(target, create=True):
        _read_table(root)  # refuse to rewrite a file that does not parse
        text = read_markdown(target)
        document = tomlkit.parse(text) if text.strip() else tomlkit.parse(HEADER)
        files = document.setdefault("files", tomlkit.table(is_super_table=True))
        entry = files.setdefault(relative, tomlkit.table())
        if enabled is not None:
            entry["enabled"] = enabled
        if sort_order is not None:
            entry["sort_order"] = sort_order
        write_atomic(target, tomlkit.dumps(document))
    logger.info(
        "prompt.toml of %s: %s enabled=%s sort_order=%s", root, relative, enabled, sort_order
    )
