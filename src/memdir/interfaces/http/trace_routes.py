"""``/api/v1/trace``: why something was recalled, the trace of searches and recalls.

Scoped like every route: ``?agent=`` (bound to the token's agent) chooses the workspace,
and a caller reads that workspace's trace only (docs/history.md, "Why it was recalled").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from memdir.history.trace import TRACE_OFF
from memdir.interfaces.http.problems import PROBLEM_RESPONSES
from memdir.interfaces.http.routes import MemoryDep

router = APIRouter(prefix="/api/v1", tags=["history"], responses=PROBLEM_RESPONSES)


@router.get("/trace")
def read_trace(
    memory: MemoryDep,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many entries.")] = 20,
    kind: Annotated[
        Literal["search", "recall"] | None,
        Query(description="Only searches or only recalls; default both."),
    ] = None,
) -> dict[str, Any]:
    """The workspace's last searches and recalls, newest first: when, the query, who asked
    (agent, token id, session, tool) and each hit with its score and the parts of it.
    ``enabled`` false: tracing is off (``note`` says how to turn it on). ``skipped``
    counts the unreadable lines of the trace file (a crash mid-write), left out."""
    read = memory.trace.read(limit, kind)
    answer: dict[str, Any] = {
        "enabled": memory.trace.enabled,
        "entries": read.entries,
        "skipped": read.skipped,
    }
    if not memory.trace.enabled:
        answer["note"] = TRACE_OFF
    return answer
