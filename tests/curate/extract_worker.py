"""Run one extraction in its own process (used by test_curate_concurrency.py).

Usage: extract_worker.py HOME AGENT NAME GO_FILE. Signals readiness with
``<GO_FILE>.<NAME>.ready``, waits for GO_FILE, then extracts with a scripted
model that sleeps one second inside the lock, and prints the result as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from curate_support import conversation, decision

from memdir.curate import ExtractionPolicy, extract_after_conversation
from memdir.llm import Message, ScriptedChatModel, ToolSpec
from memdir.workspace import Workspace


def main() -> None:
    home, agent, name, go = Path(sys.argv[1]), sys.argv[2], sys.argv[3], Path(sys.argv[4])

    def sleepy(
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        schema: Mapping[str, Any] | None,
    ) -> str:
        time.sleep(1.0)
        return decision(daily_entry=f"- written by {name}")

    Path(f"{go}.{name}.ready").touch()
    deadline = time.monotonic() + 30
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    result = extract_after_conversation(
        Workspace(home, agent),
        conversation(),
        model=ScriptedChatModel(sleepy),
        policy=ExtractionPolicy(cooldown_s=0),  # only the lock may keep the other out
    )
    print(json.dumps({"name": name, "ran": result.ran, "skipped": result.skipped_reason}))


if __name__ == "__main__":
    main()
