"""Session kinds and what a non-private session leaves out of the prompt.

memdir's default session is ``private``: an agent and its own human. In a ``group``
session (several people in one conversation) or a ``shared`` one (a conversation
others can read, such as a public channel) the prompt keeps what the agent needs to
work and leaves out what is private to its human:

- MEMORY.md (or memory.md), the curated long-term memory, and the high-salience facts;
- the saved facts in the recent daily notes: every line carrying a ``memdir:`` marker
  (a saved fact, a forget, a reinforcement);
- every part of any injected file that its author marked private:

  * a block between ``<!-- private -->`` and ``<!-- /private -->`` lines (an unclosed
    block runs to the end of the file);
  * a line carrying ``<!-- private -->`` after its text;
  * a heading with ``(private)`` in it, with its section up to the next heading of the
    same or a higher level.

``SECTION_PRIVACY`` says, for every section of the prompt, what a group or shared session
sees of it (a test builds every section for every kind against it). The context report
says what was left out. Tools still reach the files: the prompt
tells the agent not to quote private memory in such a session.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, get_args

from memdir.errors import InvalidInputError

SessionKind = Literal["private", "group", "shared"]
SESSION_KINDS: tuple[str, ...] = get_args(SessionKind)
PRIVATE_ONLY_FILES = frozenset({"MEMORY.md", "memory.md"})

_OPEN = re.compile(r"^\s*<!--\s*private\s*-->\s*$", re.IGNORECASE)
_CLOSE = re.compile(r"^\s*<!--\s*/\s*private\s*-->\s*$", re.IGNORECASE)
_INLINE = re.compile(r"<!--\s*private\s*-->", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})\s")
_PRIVATE_HEADING = re.compile(r"\(\s*private\s*\)", re.IGNORECASE)
_SAVED_FACT = re.compile(r"<!--\s*memdir:[a-z]+\b", re.IGNORECASE)

SECTION_PRIVACY: Mapping[str, str] = {
    "": "shown (the base prompt)",
    "Safety": "shown",
    "Tools": "shown",
    "Current date and time": "shown",
    "Runtime": "shown",
    "Session": "shown in group and shared sessions only: what they leave out",
    "Project context": "MEMORY.md left out; parts marked private left out",
    "Truncated files": "shown",
    "Memory": "shown (a count of daily notes)",
    "Recent daily notes": "saved-fact lines and parts marked private left out",
    "Learnings": "parts marked private left out",
    "High-salience facts": "left out",
    "Skills": "parts marked private left out",
}
"""Every section of the system prompt (its ``# `` heading) and what a group or shared
session keeps of it; a private session sees all of each."""


def check_session_kind(kind: str) -> SessionKind:
    """``kind`` if it is a session kind, else an error naming the three."""
    if kind not in SESSION_KINDS:
        raise InvalidInputError(
            f"unknown session kind {kind!r}; use private (you and your human), group "
            "(several people) or shared (a conversation others can read)"
        )
    checked: SessionKind = kind  # type: ignore[assignment]  # checked just above
    return checked


def is_private(kind: str) -> bool:
    return kind == "private"


def redact_private(text: str) -> tuple[str, int]:
    """``text`` without the parts marked private, and how many lines were left out."""
    kept: list[str] = []
    removed = 0
    in_block = False
    section_level: int | None = None
    for line in text.split("\n"):
        heading = _HEADING.match(line)
        if section_level is not None and heading and len(heading.group(1)) <= section_level:
            section_level = None
        if in_block:
            removed += 1
            in_block = not _CLOSE.match(line)
            continue
        if _OPEN.match(line):
            in_block, removed = True, removed + 1
            continue
        if heading and section_level is None and _PRIVATE_HEADING.search(line):
            section_level = len(heading.group(1))
        if section_level is not None or _INLINE.search(line):
            removed += 1
            continue
        kept.append(line)
    return "\n".join(kept), removed


def redact_for_session(text: str, drop_saved_facts: bool = False) -> tuple[str, int]:
    """``text`` for a group or shared session: without its parts marked private and (with
    ``drop_saved_facts``) its saved-fact lines; and how many lines were left out."""
    removed = 0
    if drop_saved_facts:
        lines = text.split("\n")
        kept = [line for line in lines if not _SAVED_FACT.search(line)]
        removed, text = len(lines) - len(kept), "\n".join(kept)
    text, private = redact_private(text)
    return text, removed + private


def render_session(kind: str, tool_names: tuple[str, ...] | list[str]) -> str:
    """The prompt section for a non-private session ("" for a private one)."""
    if is_private(kind):
        return ""
    who = (
        "several people take part in this conversation"
        if kind == "group"
        else "this conversation can be read by others"
    )
    search = " or what memory_search finds" if "memory_search" in tool_names else ""
    return (
        f"# Session: {kind}\n"
        f"This is a {kind} session: {who}. MEMORY.md, the saved facts and whatever your "
        "human marked private are not loaded. Do not quote private memory (MEMORY.md, "
        f"USER.md details, daily notes{search}) here unless your human asked you to."
    )
