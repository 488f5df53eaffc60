"""Reading the transcripts of Claude Code and Codex CLI into user and assistant messages.

Both hosts write one JSON object a line. **Claude Code** (``~/.claude/projects/<project>/
<session>.jsonl``, ``$CLAUDE_CONFIG_DIR`` when set): entries of ``type`` ``user`` and
``assistant`` carry ``message.content``, a string or a list of blocks; only ``text``
blocks are kept (tool calls, tool results, thinking and images are not the
conversation), as are neither side-chain (sub-agent) nor meta entries, nor the echoes of
slash commands. Each entry's ``uuid`` is its message id. **Codex CLI** (``~/.codex/
sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``, ``$CODEX_HOME`` when set):
``response_item`` entries whose payload is a ``message`` of role ``user`` or ``assistant``
(``input_text`` / ``output_text`` parts); the instructions and environment Codex sends as
user messages are left out. A Codex entry has no id: its id is a hash of its line, which
never changes in an append-only file.

A transcript path is accepted only inside the host's own folder (symbolic links resolved
first), as a regular ``.jsonl`` file, and only its last ``MAX_TRANSCRIPT_BYTES`` are read;
a line that is not JSON is skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memdir.errors import InvalidInputError, NotFoundError

MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024
"""Only the end of a longer transcript is read (curation reads the last 30 messages)."""
MAX_MESSAGES = 400
"""At most this many of the last messages are taken from one transcript."""
MAX_MESSAGE_CHARS = 20_000
"""A longer message is cut (extraction reads 2,000 characters of each, a note 2,000)."""

_UUIDISH = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
_CLAUDE_NOISE = ("<command-", "<local-command-", "Caveat: The messages below were generated")
_CODEX_NOISE = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<user_shell_command>",
    "# AGENTS.md instructions",
)


NOTIFIED = "cxn-"
"""The id prefix of a message known only from a host's notification (Codex's ``notify``
names the turn's messages before its rollout may hold them): the rollout's own line for
the same message takes its place (``capture``), so it is stored once."""


@dataclass(frozen=True)
class HostMessage:
    """One user or assistant message of a host's transcript, with the host's id for it."""

    id: str
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class HostTranscript:
    """What a host's transcript file says: its messages, in order, and what was left out."""

    path: Path
    messages: tuple[HostMessage, ...]
    skipped_lines: int = 0
    truncated: bool = False


def claude_code_root() -> Path:
    """Claude Code's folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def codex_sessions_root() -> Path:
    """Where Codex CLI keeps its session rollouts: ``$CODEX_HOME/sessions``, else
    ``~/.codex/sessions``."""
    configured = os.environ.get("CODEX_HOME")
    home = Path(configured).expanduser() if configured else Path.home() / ".codex"
    return home / "sessions"


def confined_transcript(path: str | Path, root: Path, option: str) -> Path:
    """``path`` resolved, when it is a regular ``.jsonl`` file inside ``root``.

    ``option`` names how the caller chooses another root, for the error message.
    """
    raw = Path(path).expanduser()
    if not raw.is_absolute():
        raise InvalidInputError(f"transcript path {str(path)!r} is not absolute")
    resolved, base = raw.resolve(), root.expanduser().resolve()
    if not resolved.is_relative_to(base):
        raise InvalidInputError(
            f"transcript {str(path)!r} is outside {base}; memdir reads transcripts only "
            f"there (choose another folder with {option})"
        )
    if resolved.suffix != ".jsonl":
        raise InvalidInputError(f"transcript {str(path)!r} is not a .jsonl file")
    if not resolved.is_file():
        raise NotFoundError(f"transcript {str(path)!r} does not exist or is not a file")
    return resolved


def _tail_lines(path: Path, limit: int) -> tuple[list[bytes], bool]:
    """The complete lines of the last ``limit`` bytes of ``path``; whether it was cut."""
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        start = max(0, size - limit)
        handle.seek(start)
        data = handle.read(limit)
    truncated = start > 0
    if truncated:
        data = data.split(b"\n", 1)[1] if b"\n" in data else b""
    return [line for line in data.split(b"\n") if line.strip()], truncated


def _records(lines: list[bytes]) -> Iterator[tuple[bytes, dict[str, Any] | None]]:
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            yield line, None
            continue
        yield line, record if isinstance(record, dict) else None


def _line_id(prefix: str, line: bytes) -> str:
    return f"{prefix}{hashlib.sha256(line.strip()).hexdigest()[:24]}"


def _text_of(content: Any, kinds: tuple[str, ...]) -> str:
    """The text of a message's content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") in kinds
        and isinstance(block.get("text"), str)
    ]
    return "\n\n".join(part for part in parts if part.strip())


def _claude_message(line: bytes, record: dict[str, Any]) -> HostMessage | None:
    kind = record.get("type")
    message = record.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return None
    role: Literal["user", "assistant"] = "user" if kind == "user" else "assistant"
    if record.get("isSidechain") or record.get("isMeta"):
        return None
    text = _text_of(message.get("content"), ("text",)).strip()
    if not text or (kind == "user" and text.startswith(_CLAUDE_NOISE)):
        return None
    uuid = record.get("uuid")
    message_id = uuid if isinstance(uuid, str) and _UUIDISH.fullmatch(uuid) else None
    return HostMessage(message_id or _line_id("cc-", line), role, text)


def _codex_message(line: bytes, record: dict[str, Any]) -> HostMessage | None:
    # the older rollouts have the item itself on the line
    payload = record.get("payload") if record.get("type") == "response_item" else record
    if not isinstance(payload, dict) or payload.get("type") != "message":
        return None
    if payload.get("role") not in ("user", "assistant"):
        return None
    role: Literal["user", "assistant"] = "user" if payload["role"] == "user" else "assistant"
    text = _text_of(payload.get("content"), ("input_text", "output_text", "text")).strip()
    if not text or (role == "user" and text.startswith(_CODEX_NOISE)):
        return None
    return HostMessage(_line_id("cx-", line), role, text)


def _read(
    path: Path, parse: Callable[[bytes, dict[str, Any]], HostMessage | None], limit: int
) -> HostTranscript:
    lines, truncated = _tail_lines(path, limit)
    messages: list[HostMessage] = []
    skipped = 0
    for line, record in _records(lines):
        if record is None:
            skipped += 1
            continue
        found = parse(line, record)
        if found is not None:
            if len(found.text) > MAX_MESSAGE_CHARS:
                found = HostMessage(found.id, found.role, found.text[:MAX_MESSAGE_CHARS] + " [...]")
            messages.append(found)
    truncated = truncated or len(messages) > MAX_MESSAGES
    return HostTranscript(path, tuple(messages[-MAX_MESSAGES:]), skipped, truncated)


def read_claude_code(path: Path, limit: int = MAX_TRANSCRIPT_BYTES) -> HostTranscript:
    """The user and assistant messages of a Claude Code transcript (a confined path)."""
    return _read(path, _claude_message, limit)


def read_codex(path: Path, limit: int = MAX_TRANSCRIPT_BYTES) -> HostTranscript:
    """The user and assistant messages of a Codex CLI session rollout (a confined path)."""
    return _read(path, _codex_message, limit)


def find_codex_rollout(root: Path, thread_id: str) -> Path | None:
    """The newest rollout of Codex thread ``thread_id`` under ``root``, or None; confined as
    a given path is (a symbolic link found there may not lead out of ``root``)."""
    if not _UUIDISH.fullmatch(thread_id):
        raise InvalidInputError(
            f"Codex thread id {thread_id!r} is not an id (letters, digits, '-' and '_')"
        )
    if not root.is_dir():
        return None
    found = sorted(root.rglob(f"rollout-*{thread_id}.jsonl"), reverse=True)
    return confined_transcript(found[0].absolute(), root, "--sessions-root") if found else None
