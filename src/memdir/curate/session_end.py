"""Session end (``/new``): the end of a conversation becomes a readable note.

``end_session()`` writes the last ``count`` (default 15) user and assistant
messages with text to ``memory/YYYY-MM-DD-<slug>.md``: a heading, the time,
the session id when known, and one bullet per message (``- **user**: ...``,
long messages cut at 2,000 characters, further lines indented under the
bullet). The slug comes from the model through a tiny structured call (1-2
words, lower-case, sanitised to ``[a-z0-9-]``); without a model, or when the
model fails or answers nothing usable, it is the time as ``HHMM``. An existing
note is never overwritten: the name gets ``-2``, ``-3``, ... instead, and the
file is created atomically (no reader sees it half-written).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import pydantic

from memdir.curate.guard import Clock, local_now
from memdir.errors import ChatModelError, InvalidInputError
from memdir.facts.safety import redact_secrets
from memdir.llm import ChatModel, Message, complete_structured
from memdir.workspace import MEMORY_DIR, Workspace
from memdir.workspace.atomic import create_exclusive

logger = logging.getLogger(__name__)

DEFAULT_COUNT = 15
MAX_MESSAGE_CHARS = 2000
MAX_SLUG_CHARS = 40
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


class SessionSlug(pydantic.BaseModel):
    """The model's name for a conversation: one or two words."""

    slug: str = pydantic.Field(max_length=MAX_SLUG_CHARS)


@dataclass(frozen=True)
class SessionNote:
    """The note a session end wrote: its workspace-relative path and how it was named."""

    path: str
    slug: str
    slug_method: str
    message_count: int


def sanitise_slug(text: str, max_words: int = 2) -> str:
    """``text`` as a slug: lower-case ``[a-z0-9]`` words joined by '-', at most ``max_words``."""
    words = [word for word in _NOT_SLUG.split(text.lower()) if word][:max_words]
    return "-".join(words)[:MAX_SLUG_CHARS].strip("-")


def last_messages(messages: Sequence[Message], count: int) -> list[Message]:
    """The last ``count`` user and assistant messages that have text."""
    if count < 1:
        raise InvalidInputError(f"count must be 1 or more, got {count!r}")
    said = [m for m in messages if m.role in ("user", "assistant") and m.content.strip()]
    return said[-count:]


_SLUG_PROMPT = (
    "Name this conversation for a file name: one or two lower-case English words that say "
    "what it was about, joined by '-' (for example 'tax-return' or 'vacation')."
)


def slug_from_model(model: ChatModel, messages: Sequence[Message]) -> str | None:
    """A sanitised slug from the model, or None when it fails or gives nothing usable."""
    shown = "\n".join(f"{m.role}: {m.content.strip()[:300]}" for m in messages)
    prompt = [Message("system", _SLUG_PROMPT), Message("user", shown)]
    try:
        answer = complete_structured(model, prompt, SessionSlug, max_tokens=50)
    except ChatModelError as exc:
        logger.warning("session note named by time: the model failed: %s", exc)
        return None
    return sanitise_slug(answer.slug) or None


def render_session_note(
    messages: Sequence[Message], when: datetime, slug: str, session_id: str | None
) -> str:
    """The Markdown of a session-end note."""
    lines = [
        f"# Session {when:%Y-%m-%d}: {slug}",
        "",
        f"- **Time**: {when.isoformat(timespec='minutes')}",
    ]
    if session_id:
        lines.append(f"- **Session**: {session_id}")
    lines += ["", "## Messages", ""]
    for message in messages:
        text = message.content.strip()
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[:MAX_MESSAGE_CHARS].rstrip() + " [...]"
        first, *rest = text.split("\n")
        lines.append(f"- **{message.role}**: {first}")
        lines.extend(f"  {line}" if line.strip() else "" for line in rest)
    return "\n".join(lines) + "\n"


def _create_note(workspace: Workspace, day: str, slug: str, text: str) -> str:
    folder = workspace.memory_dir
    folder.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, 1000):
        stem = f"{day}-{slug}" if attempt == 1 else f"{day}-{slug}-{attempt}"
        if create_exclusive(folder / f"{stem}.md", text):
            return f"{MEMORY_DIR}/{stem}.md"
    raise InvalidInputError(  # pragma: no cover - a thousand notes with one name
        f"every name from {day}-{slug}.md to {day}-{slug}-999.md is taken in {folder}; "
        "move old session notes away"
    )


def end_session(
    workspace: Workspace,
    messages: Sequence[Message],
    *,
    model: ChatModel | None = None,
    count: int = DEFAULT_COUNT,
    session_id: str | None = None,
    clock: Clock = local_now,
) -> SessionNote | None:
    """Write the session-end note (see the module docstring); None when nothing was said."""
    chosen = last_messages(messages, count)
    if not chosen:
        logger.info("session end: no user or assistant messages, no note written")
        return None
    when = clock()
    slug = slug_from_model(model, chosen) if model is not None else None
    method = "model" if slug else "time"
    slug = slug or f"{when:%H%M}"
    text, left_out = redact_secrets(render_session_note(chosen, when, slug, session_id))
    if left_out:
        logger.warning("session end: left %d credential-like line(s) out of the note", left_out)
    path = _create_note(workspace, f"{when:%Y-%m-%d}", slug, text)
    logger.info("session end: wrote %s (%d messages)", path, len(chosen))
    return SessionNote(path, slug, method, len(chosen))
