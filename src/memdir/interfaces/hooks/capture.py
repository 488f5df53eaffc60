"""A host's session handed to memdir's curation, once.

``capture_session()`` keeps the host's messages as memdir's transcript
``sessions/<agent>/<host>-<id>.jsonl`` (a message whose id the transcript holds is
skipped, as ``POST /api/v1/sessions/{id}/messages`` skips it), then:

* extracts (``Memory.extract``: the model when configured, explicit statements
  otherwise) when messages came that no extraction has read yet;
* when the session ended, writes the session-end note (``Memory.end_session``) when
  messages came since the last note (or there is none yet).

What was read and noted is kept beside the transcript in ``<id>.capture.json``, under
a lock, so the same session handed over twice, or by two hooks at once, is curated
once. A message first known from a notification (id ``transcripts.NOTIFIED...``: Codex's
``notify`` can run before the rollout holds the turn) is the same message as the
rollout's line of that role and text that comes later: that line is not stored again.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.interfaces.hooks.transcripts import NOTIFIED, HostMessage
from memdir.llm import Message
from memdir.workspace.atomic import write_atomic
from memdir.workspace.locking import lock_file


@dataclass(frozen=True)
class CaptureResult:
    """What one hand-over did."""

    session_id: str
    appended: int
    skipped: int
    extraction: str
    facts_saved: int
    note: str | None


def memdir_session_id(host: str, host_session_id: str) -> str:
    """The id of memdir's transcript of a host's session: ``<host>-<host's id>``."""
    return f"{host}-{host_session_id}"


def _read_state(path: Path) -> dict[str, Any]:
    try:
        state = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def capture_session(
    memory: Any, host: str, host_session_id: str, messages: tuple[HostMessage, ...], *, end: bool
) -> CaptureResult:
    """Append what is new of ``messages``, extract from it, and note the session at its end."""
    session_id = memdir_session_id(host, host_session_id)
    transcript = memory.session(session_id)
    state_path = transcript.path.with_suffix(".capture.json")
    state_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_file(state_path.with_suffix(".lock"), create=True):
        stored = transcript.load().messages if transcript.exists else ()
        seen = {m.id for m in stored}
        notified = Counter(  # stored from a notification: the rollout's line is the same
            (m.message.role, m.message.content) for m in stored if m.id.startswith(NOTIFIED)
        )
        fresh: dict[str, HostMessage] = {}
        for message in messages:
            if message.id in seen or message.id in fresh:
                continue
            if not message.id.startswith(NOTIFIED) and notified[(message.role, message.text)]:
                notified[(message.role, message.text)] -= 1
                continue
            fresh[message.id] = message
        new = list(fresh.values())
        if new:
            transcript.extend(
                [Message(m.role, m.text) for m in new], message_ids=[m.id for m in new]
            )
        state = _read_state(state_path)
        total = len(seen) + len(new)
        extraction, facts_saved = "nothing new to extract from", 0
        if total and state.get("extracted_through", 0) < total:
            result = memory.extract(session_id)
            facts_saved = result.facts_saved
            if result.ran:
                extraction = f"{result.method}: {facts_saved} facts saved"
                if result.proposals:  # curate.review: for `memdir proposals`
                    extraction += f", proposed {', '.join(result.proposals)}"
                state["extracted_through"] = total
            else:  # not marked: the next hand-over (the session's end at the latest) retries
                extraction = f"skipped: {result.skipped_reason}"
        note = None
        if end and total and state.get("noted_through", 0) < total:
            written = memory.end_session(session_id)
            note = None if written is None else written.path
            state["noted_through"] = total
        state["messages"] = total
        write_atomic(state_path, json.dumps(state, sort_keys=True) + "\n")
    return CaptureResult(
        session_id, len(new), len(messages) - len(new), extraction, facts_saved, note
    )


def note_idle_sessions(memory: Any, host: str, idle_s: float, keep: str = "") -> list[str]:
    """Write the session-end note of ``host``'s sessions idle for ``idle_s`` seconds.

    For a host that says when a turn ends but never when a session does (Codex CLI's
    ``notify``): a session nobody added to for ``idle_s`` is over. ``keep`` (the session
    being captured now) is left alone. Returns the notes written.
    """
    cutoff = time.time() - idle_s
    written: list[str] = []
    for info in memory.sessions():
        if not info.session_id.startswith(f"{host}-") or info.session_id == keep:
            continue
        if info.modified.timestamp() > cutoff:
            continue
        state_path = info.path.with_suffix(".capture.json")
        if not state_path.is_file():
            continue
        with lock_file(state_path.with_suffix(".lock"), create=True):
            state = _read_state(state_path)
            total = state.get("messages", 0)
            if not total or state.get("noted_through", 0) >= total:
                continue
            note = memory.end_session(info.session_id)
            state["noted_through"] = total
            write_atomic(state_path, json.dumps(state, sort_keys=True) + "\n")
        if note is not None:
            written.append(note.path)
    return written
