"""Helpers shared by the curation tests (imported by name, like the other test folders do)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from memdir.llm import Message

NOW = datetime(2026, 11, 22, 10, 30, tzinfo=UTC)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def conversation(
    last_user: str = "Please remember that the deploy runs on Fridays.",
) -> list[Message]:
    """Four user/assistant turns ending with ``last_user``."""
    return [
        Message("system", "You are a helpful agent."),
        Message("user", "Hi, I need help with our deployment schedule."),
        Message("assistant", "Sure, what would you like to know about it?"),
        Message("user", "We moved it around a few times this month."),
        Message("assistant", "Understood. What is the schedule now?"),
        Message("user", last_user),
    ]


def decision(**fields: Any) -> str:
    """A JSON ExtractionDecision reply."""
    body: dict[str, Any] = {"should_update": True, "reason": "test"}
    body.update(fields)
    return json.dumps(body)
