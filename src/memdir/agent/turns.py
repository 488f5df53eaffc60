"""Values the chat agent hands to its display: events, turns and its status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memdir.agent.toolbox import ToolRun
from memdir.llm import Usage

EventKind = Literal[
    "tool_call",
    "tool_error",
    "correction",
    "flushed",
    "compacted",
    "warning",
    "pruned",
    "emergency",
    "ritual",
    "rounds_exhausted",
]


@dataclass(frozen=True)
class AgentEvent:
    """Something the agent did on the way to a reply, in one line for a person."""

    kind: EventKind
    text: str


@dataclass(frozen=True)
class Turn:
    """One user message answered: the reply, the tool calls made and the events."""

    reply: str
    tool_runs: tuple[ToolRun, ...] = ()
    events: tuple[AgentEvent, ...] = ()
    usage: Usage | None = None


@dataclass(frozen=True)
class AgentStatus:
    """What ``/status`` shows."""

    agent: str
    session_id: str
    model: str
    session_kind: str
    tokens: int
    window: int
    level: str
    messages: int
    last_input_tokens: int | None
    ritual_active: bool
    configured_window: int | None = None

    def rows(self) -> list[tuple[str, str]]:
        """Label/value pairs in display order."""
        reported = "-" if self.last_input_tokens is None else f"{self.last_input_tokens:,}"
        learned = self.configured_window is not None and self.window < self.configured_window
        window = (
            f"{self.window:,} (learned from a context-length error; configured "
            f"{self.configured_window:,})"
            if learned
            else f"{self.window:,}"
        )
        return [
            ("agent", self.agent),
            ("session", self.session_id),
            ("session kind", self.session_kind),
            ("model", self.model),
            ("context window", window),
            ("tokens used", f"{self.tokens:,} / {self.window:,} ({self.tokens / self.window:.0%})"),
            ("context level", self.level),
            ("messages", str(self.messages)),
            ("last reported input tokens", reported),
            ("first-run ritual", "active (BOOTSTRAP.md)" if self.ritual_active else "done"),
        ]
