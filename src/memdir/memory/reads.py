"""Reads never write: the writes a read makes on the side are skipped when they cannot be made.

A search brings the index up to date first, opening the facts replays the notes changed
since the last record, a recall counts its facts: all three write. On a full disk or a
read-only home these writes fail, and the read must still answer from the files and the
index as they are. ``best_effort`` runs such a side write and, when the disk is full or
the home read-only, skips it and logs why once per process and kind.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from memdir.errors import DiskFullError, ReadOnlyHomeError

log = logging.getLogger(__name__)
T = TypeVar("T")

SKIPPABLE = (DiskFullError, ReadOnlyHomeError)
_said: set[tuple[str, str]] = set()


def best_effort(what: str, action: Callable[[], T], default: T) -> T:
    """``action()``; on a full disk or a read-only home, ``default`` and one warning
    (``what`` says what was skipped, e.g. "bringing the index up to date")."""
    try:
        return action()
    except SKIPPABLE as exc:
        key = (what, type(exc).__name__)
        if key not in _said:
            _said.add(key)
            log.warning("%s skipped; answering from the files and index as they are: %s",
                        what, exc)  # fmt: skip
        return default


def read_only_home(home: Path) -> bool:
    """Whether this process cannot write ``home`` (a read-only disk, or folders this user
    may not write): its workspace folder or its index folder, where they exist."""
    folders = [home / "workspace", home / "index"]
    existing = [folder for folder in folders if folder.is_dir()] or [home]
    return any(folder.exists() and not os.access(folder, os.W_OK) for folder in existing)
