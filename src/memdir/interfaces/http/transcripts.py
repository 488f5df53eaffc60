"""``/api/v1/sessions``: a host that runs the conversation hands memdir its transcript.

An agent framework with its own chat loop (OpenClaw, through ``integrations/openclaw``)
sends each finished turn here; memdir keeps it as ``sessions/<agent>/<id>.jsonl``, the
transcript ``POST /memory/{agent}/summarize/{id}`` (extraction) and ``POST
/sessions/{id}/end`` (the session-end note) read. A message sent with an ``id`` the
transcript already holds is skipped, so a host may resend a whole conversation after each
turn without duplicating it.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from fastapi import APIRouter
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel, ConfigDict, Field

from memdir.errors import NotFoundError
from memdir.interfaces.http.problems import PROBLEM_RESPONSES
from memdir.interfaces.http.routes import MemoryDep
from memdir.llm import Message
from memdir.tools import MAX_CONTENT_CHARS

router = APIRouter(prefix="/api/v1/sessions", tags=["sessions"], responses=PROBLEM_RESPONSES)

MAX_MESSAGES = 500


class TranscriptMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$",
        description="The host's id of the message; one the transcript holds is skipped.",
    )
    role: Literal["user", "assistant"]
    content: str = Field(max_length=MAX_CONTENT_CHARS)


class AppendBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    messages: list[TranscriptMessage] = Field(min_length=1, max_length=MAX_MESSAGES)


@router.post("/{session_id}/messages")
def append_messages(memory: MemoryDep, session_id: str, body: AppendBody) -> dict[str, Any]:
    """Append the messages whose ``id`` the transcript does not hold yet, in order."""
    session = memory.session(session_id)
    seen = {m.id for m in session.load().messages} if session.exists else set()
    new: list[TranscriptMessage] = []
    for message in body.messages:
        if message.id is None or message.id not in seen:
            new.append(message)
            seen.add(message.id or "")
    if new:
        session.extend(
            [Message(m.role, m.content) for m in new],
            message_ids=[m.id or uuid.uuid4().hex for m in new],
        )
    return {
        "session_id": session_id,
        "appended": len(new),
        "skipped": len(body.messages) - len(new),
    }


@router.post("/{session_id}/end")
def end_session(memory: MemoryDep, session_id: str) -> dict[str, Any]:
    """Write the session's last messages as ``memory/YYYY-MM-DD-<slug>.md``; ``note`` is
    null when the transcript has no user or assistant text."""
    if not memory.session(session_id).exists:
        raise NotFoundError(
            f"session {session_id!r} has no transcript here; append a message first with "
            f"POST /api/v1/sessions/{session_id}/messages (same ?agent=)"
        )
    note = memory.end_session(session_id)
    return {"session_id": session_id, "note": None if note is None else jsonable_encoder(note)}
