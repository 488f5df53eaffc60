"""The heartbeat: HEARTBEAT.md's checklist run as a scheduled agent turn.

OpenClaw and OpenLegion wake their agents on a schedule to look after things no one
asked about. ``run_heartbeat(memory, model)`` does one such run for one workspace:

1. It skips, with a reason, when the workspace has no HEARTBEAT.md of its own (an
   agent does not run the global checklist again: the global workspace runs it), when
   the file's checklist is empty (the bullets under a ``Checklist`` heading, or every bullet when
   there is no such heading; ``(for example: ...)`` placeholders do not count), or
   while the first-run ritual lasts (nobody is there to answer it). A skipped run
   calls no model.
2. Otherwise it sends one user message, the heartbeat request with HEARTBEAT.md in it,
   through a ``ChatAgent`` on the day's heartbeat session (``heartbeat-YYYYMMDD``), so
   the model has the system prompt and the memory tools, and sees today's earlier
   runs. Extraction is off: a scheduled run is no conversation.
3. A reply of ``HEARTBEAT_OK`` with no tool call that changed anything means nothing
   needed attention; it is logged, not written. Anything else is recorded in today's
   daily note under ``### Heartbeat HH:MM``: the tools it called and its reply.

``memdir serve`` runs it for every workspace on ``curate.heartbeat_cron`` when
``curate.heartbeat`` is on and a model is configured; ``memdir heartbeat`` runs it once.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memdir.agent.conversation import ChatAgent
from memdir.curate.scheduler import HEARTBEAT_FILE, parse_rules
from memdir.errors import NotFoundError
from memdir.facts.safety import redact_secrets
from memdir.workspace import NoteLocation

if TYPE_CHECKING:
    from memdir.llm import ChatModel
    from memdir.memory import Memory

logger = logging.getLogger(__name__)

HEARTBEAT_OK = "HEARTBEAT_OK"
MAX_REPLY_CHARS = 1_000
HEARTBEAT_TOOL_ROUNDS = 4
_CHECKLIST_HEADING = re.compile(r"^#{1,6}\s+checklist\b.*$", re.IGNORECASE | re.MULTILINE)
_NEXT_HEADING = re.compile(r"^#{1,6}\s", re.MULTILINE)
REQUEST = """\
Heartbeat: this is a scheduled run, not a message from your human; nobody is waiting \
for an answer. Follow the rules and work through the checklist of HEARTBEAT.md below, \
and nothing else. If nothing needs attention, reply with the single line HEARTBEAT_OK.

<heartbeat-file>
{text}
</heartbeat-file>"""
WRITE_TOOLS = frozenset(
    {"memory_save", "memory_forget", "memory_write_file", "memory_edit_file",
     "memory_set_prompt_file", "memory_finish_ritual"}
)  # fmt: skip


@dataclass(frozen=True)
class HeartbeatRun:
    """One heartbeat of one workspace: whether it ran, what it did, where it was noted."""

    agent: str
    ran: bool
    skipped_reason: str | None = None
    reply: str = ""
    tools: tuple[str, ...] = ()
    note: NoteLocation | None = None
    session_id: str | None = None

    @property
    def quiet(self) -> bool:
        """True when the run found nothing to do (``HEARTBEAT_OK``, nothing changed)."""
        return self.ran and self.note is None


def checklist(text: str) -> list[str]:
    """The checklist items of a HEARTBEAT.md (see the module docstring)."""
    heading = _CHECKLIST_HEADING.search(text)
    if heading is None:
        return parse_rules(text)
    rest = text[heading.end() :]
    following = _NEXT_HEADING.search(rest)
    return parse_rules(rest[: following.start()] if following else rest)


def _skip(agent: str, reason: str) -> HeartbeatRun:
    logger.info("heartbeat of %s skipped: %s", agent, reason)
    return HeartbeatRun(agent, ran=False, skipped_reason=reason)


def run_heartbeat(memory: Memory, model: ChatModel, *, now: datetime | None = None) -> HeartbeatRun:
    """Run HEARTBEAT.md's checklist once for ``memory``'s workspace (module docstring)."""
    agent = memory.agent_id or "global"
    moment = now or datetime.now().astimezone()
    if memory.agent_id is not None and not (memory.workspace.root / HEARTBEAT_FILE).is_file():
        return _skip(agent, "no HEARTBEAT.md of its own (the global one runs once, globally)")
    try:
        text = memory.read_file(HEARTBEAT_FILE)
    except NotFoundError:
        return _skip(agent, "no HEARTBEAT.md in the workspace")
    if not checklist(text):
        return _skip(agent, "the checklist of HEARTBEAT.md is empty")
    if memory.ritual_active:
        return _skip(agent, "the first-run ritual (BOOTSTRAP.md) is not finished")
    session_id = f"heartbeat-{moment:%Y%m%d}"
    with ChatAgent(
        memory, model, session_id=session_id, auto_extract=False,
        max_tool_rounds=HEARTBEAT_TOOL_ROUNDS,
    ) as chat:  # fmt: skip
        turn = chat.send(REQUEST.format(text=text.strip()))
    tools = tuple(run.call.name for run in turn.tool_runs)
    reply = turn.reply.strip()
    changed = any(name in WRITE_TOOLS for name in tools)
    if reply == HEARTBEAT_OK and not changed:
        logger.info("heartbeat of %s: nothing needed attention", agent)
        return HeartbeatRun(agent, True, reply=reply, tools=tools, session_id=session_id)
    shown = reply if len(reply) <= MAX_REPLY_CHARS else reply[: MAX_REPLY_CHARS - 3] + "..."
    lines = [f"### Heartbeat {moment:%H:%M}"]
    if tools:
        lines.append(f"- tools: {', '.join(tools)}")
    lines.append(f"- reply: {' '.join(shown.split()) or '(none)'}")
    entry, left_out = redact_secrets("\n".join(lines))
    if left_out:
        logger.warning("heartbeat: left %d credential-like line(s) out of the note", left_out)
    note = memory.append_daily(entry, date=moment)
    logger.info("heartbeat of %s noted at %s", agent, note.cite())
    return HeartbeatRun(agent, True, reply=reply, tools=tools, note=note, session_id=session_id)
