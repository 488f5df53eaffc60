"""Helpers for the chat agent tests: a recording display, scripted "brains", lines."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memdir.agent import AgentEvent, ReadLine
from memdir.llm import Completion, Message, ToolCall, ToolSpec


@dataclass
class RecordingDisplay:
    """A ``Display`` that keeps everything it was shown."""

    replies: list[str] = field(default_factory=list)
    events: list[AgentEvent] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    tables: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)

    def show_reply(self, text: str) -> None:
        self.replies.append(text)

    def show_event(self, event: AgentEvent) -> None:
        self.events.append(event)

    def show_notice(self, text: str) -> None:
        self.notices.append(text)

    def show_error(self, text: str) -> None:
        self.errors.append(text)

    def show_table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        self.tables.append((title, list(columns), [list(r) for r in rows]))

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


def lines(*typed: str) -> ReadLine:
    """A ``ReadLine`` that types ``typed`` and then reports the end of input."""
    pending = iter(typed)
    return lambda: next(pending, None)


def tool_call(call_id: str, name: str, **arguments: Any) -> Completion:
    return Completion(
        "", tool_calls=(ToolCall(call_id, name, arguments),), finish_reason="tool_calls"
    )


def cat_brain(
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None,
    schema: Mapping[str, Any] | None,
) -> str | Completion:
    """Saves what the user states about a cat; answers questions from memory_recall's result."""
    assert tools, "the conversation always offers the memory tools"
    last = messages[-1]
    if last.role == "tool" and last.name == "memory_recall":
        found = re.search(r"cat's name is (\w+)", last.content)
        return f"Your cat is called {found.group(1)}." if found else "I have no idea."
    if last.role == "tool":
        return "Saved."
    text = last.content.lower()
    if "my cat's name is" in text:
        return tool_call("save-1", "memory_save", content=last.content, category="fact")
    if "cat called" in text:
        return tool_call("recall-1", "memory_recall", query="cat name")
    return "Hello!"


def chatty_brain(reply_chars: int = 300) -> Any:
    """Answers every message with a long text and never calls a tool."""

    def reply(
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        schema: Mapping[str, Any] | None,
    ) -> str:
        said = messages[-1].content[:40]
        return (f"About '{said}': " + "lorem ipsum dolor sit amet " * 40)[:reply_chars]

    return reply


def texts(messages: Iterable[Message]) -> str:
    return "\n".join(m.content for m in messages)
