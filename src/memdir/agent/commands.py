"""Slash commands of the chat: what they are called and what they do, for ``/help``."""

from __future__ import annotations

from dataclasses import dataclass

COMMANDS: dict[str, str] = {
    "/new": "end this session (session-end note, background extraction) and start a fresh one",
    "/compact": "flush durable facts to memory, then summarise older turns now",
    "/context": "show what the system prompt carries, file by file",
    "/status": "agent, session, model and how full the context window is",
    "/help": "list the commands",
    "/exit": "end the chat (memory is extracted before the process exits)",
}
ALIASES = {"/quit": "/exit", "/q": "/exit", "/?": "/help"}


@dataclass(frozen=True)
class Command:
    """A parsed slash command; ``name`` is None for an unknown one."""

    name: str | None
    typed: str


def parse_command(line: str) -> Command | None:
    """The slash command ``line`` holds, or None when it is a message for the model.

    A line starting with ``//`` is a message that starts with ``/``.
    """
    text = line.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    word = text.split()[0].lower()
    word = ALIASES.get(word, word)
    return Command(word if word in COMMANDS else None, text)


def unescape_message(line: str) -> str:
    """A message line as the model should see it (``//x`` becomes ``/x``)."""
    text = line.strip()
    return text[1:] if text.startswith("//") else text
