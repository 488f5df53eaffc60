"""Gathering what the system prompt is built from, for the ``Memory`` facade.

Part of the composition root, like ``composition.py``: it reads the settings and the
workspace and hands the prompt layer plain values (``PromptInputs``). The prompt
files come in ``prompt.toml`` order (BOOTSTRAP.md only while the first-run ritual
lasts), the recent daily notes newest first, the skills without the denied ones.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import platform
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memdir.config import Settings
from memdir.errors import ConfigError
from memdir.facts import FactBook
from memdir.facts.render import render_fact_line
from memdir.prompt import (
    MISSING_REQUIRED,
    NOTES_HEAD_MARKER,
    REQUIRED_FILES,
    BootstrapEntry,
    PromptBudget,
    PromptInputs,
    check_session_kind,
)
from memdir.version import __version__
from memdir.workspace import BOOTSTRAP_FILE, Workspace, daily_note_name, is_denied

logger = logging.getLogger(__name__)
_WARNED_MISSING: set[tuple[str, str]] = set()

BASE_PROMPT = (
    "You are a personal AI agent with persistent memory kept as Markdown files in your "
    "workspace. Your memory tools let you search, read and write those files."
)


def prompt_entries(workspace: Workspace) -> list[BootstrapEntry]:
    """The prompt files of ``workspace``, loaded, in prompt order."""
    entries = []
    for setting in workspace.prompt_files():
        if setting.path == BOOTSTRAP_FILE and not workspace.ritual_active:
            continue  # the ritual is over (or never was): nothing to report
        loaded = workspace.load_prompt_file(setting.path)
        if loaded.content is None and setting.enabled and setting.path in REQUIRED_FILES:
            _warn_missing(str(workspace.root), setting.path)
        entries.append(
            BootstrapEntry(loaded.name, loaded.content, setting.enabled, setting.sort_order)
        )
    return entries


def _warn_missing(root: str, name: str) -> None:
    """Log once per process and workspace that a required prompt file is missing."""
    if (root, name) not in _WARNED_MISSING:
        _WARNED_MISSING.add((root, name))
        logger.warning("%s is missing from %s: %s", name, root, MISSING_REQUIRED)


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:  # the working folder was deleted under the process
        return "(unknown)"


TAIL_BYTES_PER_CHAR = 16  # bytes of a note read per character of room: markers, UTF-8
MIN_TAIL_BYTES = 64 * 1024


def recent_notes(
    workspace: Workspace, today: dt.date, days: int, budget_chars: int = 4_000
) -> list[BootstrapEntry]:
    """The daily notes of the last ``days`` days up to ``today``, newest first; of a long
    note only its end, as much as ``budget_chars`` of prompt can show (a 60 MB note is
    never read whole into memory)."""
    notes = []
    limit = max(MIN_TAIL_BYTES, budget_chars * TAIL_BYTES_PER_CHAR)
    for back in range(days):
        path = daily_note_name(today - dt.timedelta(days=back))
        located = workspace.root / path
        notes.append(BootstrapEntry(path, _tail(located, limit) if located.is_file() else None))
    return notes


def _tail(path: Path, limit: int) -> str:
    """The text of ``path``, or its last ``limit`` bytes from a line start behind the
    marker that earlier entries are not shown."""
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= limit:
            return handle.read().decode("utf-8", errors="replace")
        handle.seek(size - limit)
        text = handle.read(limit).decode("utf-8", errors="replace")
    return f"{NOTES_HEAD_MARKER}\n{text[text.find(chr(10)) + 1 :]}"


def skill_lines(workspace: Workspace, deny: Sequence[str]) -> list[str]:
    """One prompt line per skill the deny list leaves: name, description, path."""
    denied = frozenset(name.strip().lower() for name in deny)
    return [
        f"{skill.name}: {skill.description} ({skill.path})" if skill.description
        else f"{skill.name} ({skill.path})"
        for skill in workspace.skills()
        if not is_denied(skill, denied)
    ]  # fmt: skip


def fact_lines(facts: FactBook, budget_chars: int) -> tuple[str, ...]:
    """The high-salience facts, one line each, within the prompt's facts budget."""
    return tuple(render_fact_line(f) for f in facts.top_salient(budget_chars=budget_chars))


def assemble_prompt_inputs(
    workspace: Workspace,
    settings: Settings,
    embedder: str,
    now: dt.datetime,
    session_kind: str | None,
    tool_names: Sequence[str],
    facts: Sequence[str],
) -> PromptInputs:
    """Everything ``build_system_prompt`` needs for ``workspace`` at ``now`` (``embedder``:
    the embedding model's name, for the runtime line)."""
    from memdir.curate import learnings_for_prompt  # curation loads only for a prompt

    cfg = settings.prompt
    kind = check_session_kind(session_kind or cfg.session_kind)
    return PromptInputs(
        base_prompt=BASE_PROMPT,
        bootstrap_files=prompt_entries(workspace),
        now=now,
        timezone=str(now.tzinfo),
        runtime={
            "agent": workspace.agent_id or "global",
            "session": kind,
            "host": socket.gethostname() or "(unknown)",
            "cwd": _cwd(),
            "home": str(workspace.home),
            "memdir": __version__,
            "python": platform.python_version(),
            "os": f"{platform.system()} {platform.release()}",
            "embedder": embedder,
        },
        tool_names=tool_names,
        daily_note_count=len(workspace.list_daily_notes()),
        memory_dir=str(workspace.memory_dir),
        learnings=learnings_for_prompt(workspace, cfg.learnings_budget_chars),
        facts=facts,
        skills=skill_lines(workspace, cfg.skills_deny),
        skills_chars=cfg.skills_budget_chars,
        budget=PromptBudget(per_file_chars=cfg.per_file_chars, total_chars=cfg.total_chars),
        session_kind=kind,
        recent_notes=recent_notes(
            workspace, now.date(), cfg.recent_notes_days, cfg.recent_notes_chars
        ),
        recent_notes_chars=cfg.recent_notes_chars,
        workspace=str(workspace.root),
    )


def prompt_timezone(name: str | None) -> Any:
    """The zone of ``prompt.timezone`` (local when unset); ``ConfigError`` when unknown."""
    if not name:
        return dt.datetime.now().astimezone().tzinfo
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(
            f"unknown timezone {name!r} in prompt.timezone; use e.g. Europe/Paris"
        ) from exc
