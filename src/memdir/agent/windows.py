"""Context windows learned from a model's context-length errors, kept across chats.

When a model refuses a request as too long, the chat learns the window it really
accepts (``memdir.context.limits``) and keeps it in
``<home>/state/context-windows.json``, by ``provider/model``, together with the
window that was configured then. The next chat with that model starts from the
learned window, as long as the configured one is unchanged: raising or lowering
``llm.context_window`` (or ``context.max_input_tokens``) forgets it, and so does
deleting the file.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memdir.llm import ChatModel
from memdir.workspace import lock_file, write_atomic

logger = logging.getLogger(__name__)

WINDOWS_FILE = Path("state") / "context-windows.json"


def model_key(model: ChatModel) -> str:
    """``provider/model``: the name a learned window is kept under."""
    return f"{model.provider}/{model.model}"


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if text.strip() else {}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("ignoring unreadable learned windows %s: %s", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def recall_window(home: Path, model: ChatModel, configured: int) -> int | None:
    """The window learned for ``model`` while ``configured`` was in force, or None."""
    entry = _read(Path(home) / WINDOWS_FILE).get(model_key(model))
    if not isinstance(entry, dict) or entry.get("configured") != configured:
        return None
    learned = entry.get("learned")
    if isinstance(learned, int) and not isinstance(learned, bool) and 0 < learned < configured:
        return learned
    return None


def remember_window(home: Path, model: ChatModel, configured: int, learned: int) -> None:
    """Keep ``learned`` as ``model``'s window while ``configured`` is in force."""
    path = Path(home) / WINDOWS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with lock_file(path, create=True):
        data = _read(path)
        data[model_key(model)] = {
            "configured": configured,
            "learned": learned,
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
