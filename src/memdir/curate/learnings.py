"""Learnings: tool failures and the human's corrections, fed back into the prompt.

``record_tool_error()`` appends to ``learnings/errors.md`` and
``record_correction()`` to ``learnings/corrections.md``. Each entry is a
``## <ISO time> · <what>`` heading and ``- **Field**: value`` bullets; a new
file starts with a ``#`` heading. Appends hold the file's lock (the
workspace's ``lock_file``), so concurrent writers never lose an entry. Argument
values whose key looks like a credential (password, token, secret, api key,
authorization) are written as ``***``.

``detect_correction()`` tells whether a user message corrects the agent. With
a model it asks (a tiny structured call, falling back to the heuristic when the
model fails); without one the heuristic matches, case-insensitively:
a leading "no," / "nope," (not "no problem", "no thanks", ...); "that's wrong",
"that is incorrect", "that's not what I asked/meant/said/wanted", "you're
wrong"; a leading "actually"; "I said", "I told you", "I meant", "I asked for";
a leading "don't", "do not", "never" or "stop"; "not X but Y". It returns the
message text (white space collapsed, at most 500 characters) or None.

``learnings_for_prompt()`` renders the newest entries of both files first, one
line each, until ``budget_chars`` is used up; the prompt builder puts that text
under ``# Learnings``.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pydantic

from memdir.curate.guard import Clock, local_now
from memdir.errors import ChatModelError, InvalidInputError
from memdir.llm import ChatModel, Message, complete_structured
from memdir.workspace import NoteLocation, Workspace, lock_file, read_markdown

logger = logging.getLogger(__name__)

ERRORS_FILE = "learnings/errors.md"
CORRECTIONS_FILE = "learnings/corrections.md"
MAX_FIELD_CHARS = 1000
MAX_CORRECTION_CHARS = 500
MAX_PROMPT_LINE_CHARS = 300

_HEADINGS = {
    ERRORS_FILE: "# Tool errors\n\nTool calls that failed, oldest first. Each one is a lesson.\n",
    CORRECTIONS_FILE: "# Corrections\n\nWhat the human corrected, oldest first.\n",
}
_SECRET_KEY = re.compile(r"pass(word)?|token|secret|api[_-]?key|authori[sz]ation|cookie", re.I)

_CORRECTION_PATTERNS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"^(?:no|nope)\b[,.!:;]?\s+(?!problem|worries|thanks|thank you|need|rush|idea)\S",
        r"\b(?:that's|that is|thats|this is|it's|you're|you are)\s+(?:just\s+)?"
        r"(?:wrong|incorrect|not right|not correct|not what i (?:asked|meant|said|wanted))",
        r"^actually\b[,\s]",
        r"\bi (?:said|told you|meant|asked for)\b",
        r"^(?:please\s+)?(?:don't|do not|never|stop)\b",
        r"\bnot\s+\S.{0,80}?,?\s+but\s+\S",
    )
)


# -- recording ---------------------------------------------------------------------------------


def _one_line(value: str, limit: int = MAX_FIELD_CHARS) -> str:
    flat = " ".join(str(value).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _redact(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: "***" if _SECRET_KEY.search(str(key)) else value for key, value in arguments.items()
    }


def _stamp(clock: Clock) -> str:
    return clock().isoformat(timespec="seconds")


def append_learning(workspace: Workspace, name: str, entry: str) -> NoteLocation:
    """Append ``entry`` to ``name`` under its lock, creating it with its heading."""
    path = workspace.resolve(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with lock_file(path, create=True):
        existing = path.read_bytes()
        if not existing:
            prefix = _HEADINGS.get(name, f"# {Path(name).stem}\n") + "\n"
        else:
            prefix = (
                "" if existing.endswith(b"\n\n") else "\n" if existing.endswith(b"\n") else "\n\n"
            )
        start = existing.count(b"\n") + prefix.count("\n") + 1
        body = entry.strip("\n") + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, (prefix + body).encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
    return NoteLocation(name, start, start + body.count("\n") - 1)


def record_tool_error(
    workspace: Workspace,
    tool: str,
    arguments: Mapping[str, Any] | None,
    error: str | BaseException,
    context: str = "",
    *,
    clock: Clock = local_now,
) -> NoteLocation:
    """Append a failed tool call to ``learnings/errors.md``; return where it landed."""
    if not isinstance(tool, str) or not tool.strip():
        raise InvalidInputError(f"tool must be a non-empty name, got {tool!r}")
    shown_error = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else error
    args = json.dumps(_redact(arguments or {}), ensure_ascii=False, sort_keys=True, default=str)
    lines = [
        f"## {_stamp(clock)} · tool `{_one_line(tool, 100)}`",
        f"- **Error**: {_one_line(shown_error)}",
        f"- **Arguments**: `{_one_line(args, 500).replace('`', chr(39))}`",
    ]
    if context.strip():
        lines.append(f"- **Context**: {_one_line(context)}")
    return append_learning(workspace, ERRORS_FILE, "\n".join(lines))


def record_correction(
    workspace: Workspace,
    correction: str,
    context: str = "",
    *,
    wrong: str | None = None,
    clock: Clock = local_now,
) -> NoteLocation:
    """Append a correction by the human to ``learnings/corrections.md``."""
    if not isinstance(correction, str) or not correction.strip():
        raise InvalidInputError(f"correction must be non-empty text, got {correction!r}")
    lines = [f"## {_stamp(clock)} · correction", f"- **Correction**: {_one_line(correction)}"]
    if wrong and wrong.strip():
        lines.append(f"- **Wrong**: {_one_line(wrong)}")
    if context.strip():
        lines.append(f"- **Context**: {_one_line(context)}")
    return append_learning(workspace, CORRECTIONS_FILE, "\n".join(lines))


# -- detecting corrections ---------------------------------------------------------------------


class CorrectionCheck(pydantic.BaseModel):
    """The model's verdict on one user message."""

    is_correction: bool
    correction: str = ""


def detect_correction_heuristically(user_text: str) -> str | None:
    """The correction in ``user_text`` by the module's patterns, or None."""
    text = " ".join(user_text.split())
    if not text or not any(pattern.search(text) for pattern in _CORRECTION_PATTERNS):
        return None
    return text[:MAX_CORRECTION_CHARS]


def detect_correction(user_text: str, model: ChatModel | None = None) -> str | None:
    """Whether ``user_text`` corrects the agent: the correction, or None."""
    if model is None:
        return detect_correction_heuristically(user_text)
    prompt = [
        Message(
            "system",
            "Does the user's message correct something the assistant said or did? If so, "
            "state the correction as one short instruction for the assistant.",
        ),
        Message("user", user_text[:4000]),
    ]
    try:
        verdict = complete_structured(model, prompt, CorrectionCheck, max_tokens=200)
    except ChatModelError as exc:
        logger.warning("correction check fell back to the heuristic: %s", exc)
        return detect_correction_heuristically(user_text)
    if not verdict.is_correction:
        return None
    return _one_line(verdict.correction or user_text, MAX_CORRECTION_CHARS)


# -- the prompt --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Learning:
    """One entry of a learnings file, as read back."""

    when: datetime | None
    title: str
    fields: dict[str, str]
    order: int

    def render(self) -> str:
        day = f"[{self.when:%Y-%m-%d}] " if self.when else ""
        if "Error" in self.fields:
            line = f"{self.title}: failed with {self.fields['Error']}"
        else:
            line = self.fields.get("Correction", self.title)
        if self.fields.get("Context"):
            line += f" (context: {self.fields['Context']})"
        return "- " + _one_line(day + line, MAX_PROMPT_LINE_CHARS)


_ENTRY_HEADING = re.compile(r"^##\s+(\S+)(?:\s+·\s+(.*))?$")
_FIELD = re.compile(r"^-\s+\*\*(\w+)\*\*:\s*(.*)$")


def parse_learnings(text: str, start_order: int = 0) -> list[Learning]:
    """The entries of a learnings file, in file order (lines that fit no entry are ignored)."""
    found: list[Learning] = []
    for line in text.splitlines():
        heading = _ENTRY_HEADING.match(line)
        if heading:
            title = (heading.group(2) or "").replace("`", "").strip()
            title = f"Tool {title.removeprefix('tool ')}" if title.startswith("tool ") else title
            found.append(
                Learning(_parse_time(heading.group(1)), title, {}, start_order + len(found))
            )
        elif found and (field := _FIELD.match(line)):
            found[-1].fields[field.group(1)] = field.group(2).strip()
    return found


def _parse_time(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def learnings_for_prompt(workspace: Workspace, budget_chars: int = 2000) -> str:
    """The newest learnings first, one line each, within ``budget_chars``; "" when none."""
    if budget_chars < 0:
        raise InvalidInputError(f"budget_chars must be 0 or more, got {budget_chars!r}")
    entries: list[Learning] = []
    for name in (ERRORS_FILE, CORRECTIONS_FILE):
        try:  # a bad file (a symlink out of the workspace, unreadable) costs its lessons only
            path = workspace.resolve(name)
            if path.is_file():
                text = read_markdown(path, strict=False)
                entries.extend(parse_learnings(text, len(entries)))
        except (InvalidInputError, OSError) as exc:
            logger.warning("left %s out of the prompt's learnings: %s", name, exc)
    oldest = datetime.min.replace(tzinfo=UTC)
    entries.sort(key=lambda e: (e.when or oldest, e.order), reverse=True)
    lines: list[str] = []
    used = 0
    for entry in entries:
        line = entry.render()
        cost = len(line) + (1 if lines else 0)
        if used + cost > budget_chars:
            break
        lines.append(line)
        used += cost
    return "\n".join(lines)
