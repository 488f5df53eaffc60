"""Helpers of the interface tests: the facts marker and a live HTTP server process."""

from __future__ import annotations

import pytest

from live_server import LiveServer, child_env, start_server, stop_server
from memdir.memory import Memory

__all__ = ["FACTS_READY", "LiveServer", "child_env", "needs_facts", "start_server", "stop_server"]

FACTS_READY = all(hasattr(Memory, name) for name in ("save", "recall", "forget", "list_facts"))
needs_facts = pytest.mark.xfail(
    not FACTS_READY,
    reason="Memory.save/recall/forget/list_facts are not in the facade yet",
    strict=False,
)
