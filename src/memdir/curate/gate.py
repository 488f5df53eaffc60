"""Who may run an extraction now: a per-agent cross-process lock and cooldown.

The lock is ``<home>/locks/extract-<agent>.lock``, taken with a *non-blocking*
``flock``: a second attempt (another thread or process) gets ``False`` at once
and skips, it never waits. The cooldown is the time of the last run, kept in
``<home>/state/extract-<agent>.json`` (written atomically), so it holds across
processes and restarts. ``<agent>`` is the agent id, or ``global`` for the
global workspace. POSIX only (fcntl), like the session transcripts.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from memdir.home import GLOBAL_AGENT, validate_agent_id
from memdir.workspace import write_atomic

logger = logging.getLogger(__name__)

LOCKS_DIR = "locks"
STATE_DIR = "state"


def agent_key(agent_id: str | None) -> str:
    """The name used in lock and state files: the agent id or ``global``."""
    return GLOBAL_AGENT if agent_id is None else validate_agent_id(agent_id)


def extraction_lock_path(home: Path, agent_id: str | None) -> Path:
    return Path(home) / LOCKS_DIR / f"extract-{agent_key(agent_id)}.lock"


def extraction_state_path(home: Path, agent_id: str | None) -> Path:
    return Path(home) / STATE_DIR / f"extract-{agent_key(agent_id)}.json"


@contextmanager
def try_lock(path: Path) -> Iterator[bool]:
    """Yield True while holding an exclusive lock on ``path``, or False if another holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def read_last_run(home: Path, agent_id: str | None) -> datetime | None:
    """When the last extraction for the agent ran, or None (unreadable state is logged)."""
    path = extraction_state_path(home, agent_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return datetime.fromisoformat(data["last_run"])
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as exc:
        logger.warning("ignoring unreadable extraction state %s: %s", path, exc)
        return None


def record_run(home: Path, agent_id: str | None, when: datetime) -> None:
    """Remember ``when`` as the agent's last extraction run."""
    path = extraction_state_path(home, agent_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"last_run": when.isoformat()}) + "\n")


def cooldown_left(
    home: Path, agent_id: str | None, now: datetime, cooldown_s: float
) -> float | None:
    """Seconds of cooldown still to wait, or None when a run may start."""
    if cooldown_s <= 0:
        return None
    last = read_last_run(home, agent_id)
    if last is None:
        return None
    if (last.tzinfo is None) != (now.tzinfo is None):
        logger.warning("extraction state time %s has another timezone style; ignoring it", last)
        return None
    elapsed = (now - last).total_seconds()
    if elapsed < 0 or elapsed >= cooldown_s:  # a clock set back does not block forever
        return None
    return cooldown_s - elapsed
