"""The chat loop, apart from the terminal: lines in, a ``Display`` out.

``run_chat(agent, read_line, display)`` reads lines until ``/exit`` or the end
of input, sends messages to the ``ChatAgent``, runs the slash commands and, at
the end, schedules the extraction of the conversation and waits for it
(bounded). The CLI passes ``input()`` and a rich display; tests pass a list of
lines and a display that records what it was shown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from memdir.agent.commands import COMMANDS, Command, parse_command, unescape_message
from memdir.agent.conversation import ChatAgent
from memdir.agent.turns import AgentEvent
from memdir.curate import ExtractionResult
from memdir.errors import MemdirError
from memdir.prompt import MISSING_REQUIRED, REQUIRED_FILES, FileStatus

logger = logging.getLogger(__name__)

ReadLine = Callable[[], str | None]
"""Returns the next line the person typed, or None at the end of input."""


class Display(Protocol):
    """Where the chat shows things; a terminal, or a recorder in tests."""

    def show_reply(self, text: str) -> None: ...

    def show_event(self, event: AgentEvent) -> None: ...

    def show_notice(self, text: str) -> None: ...

    def show_error(self, text: str) -> None: ...

    def show_table(
        self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]
    ) -> None: ...


def run_chat(
    agent: ChatAgent, read_line: ReadLine, display: Display, *, extraction_wait_s: float = 60.0
) -> None:
    """Talk until ``/exit`` or end of input, then extract memory and wait (bounded)."""
    display.show_notice(
        f"memdir chat: agent {agent.memory.agent_id or 'global'}, session {agent.session_id}, "
        f"model {agent.model.provider}/{agent.model.model}. /help lists the commands."
    )
    if agent.ritual.active:
        display.show_notice("First run: BOOTSTRAP.md is active; the agent will introduce itself.")
    for name in missing_required_files(agent):
        display.show_error(f"{name} is missing: {MISSING_REQUIRED}")
    while True:
        line = read_line()
        if line is None:
            break
        if not line.strip():
            continue
        command = parse_command(line)
        if command is None:
            _converse(agent, unescape_message(line), display)
        elif not run_command(agent, command, display):
            break
    finish_chat(agent, display, extraction_wait_s)


def missing_required_files(agent: ChatAgent) -> list[str]:
    """The required prompt files (AGENTS.md) this chat's prompt has to do without."""
    report = agent.memory.context_report(session_kind=agent.session_kind)
    return [
        item.name
        for item in report.files
        if item.name in REQUIRED_FILES and item.status is FileStatus.MISSING
    ]


def _converse(agent: ChatAgent, text: str, display: Display) -> None:
    try:
        turn = agent.send(text, observer=display.show_event)
    except MemdirError as exc:  # boundary: one failed turn must not end the chat
        display.show_error(str(exc))
        return
    display.show_reply(turn.reply)


def run_command(agent: ChatAgent, command: Command, display: Display) -> bool:
    """Run one slash command; False when the chat should end."""
    try:
        return _dispatch(agent, command, display)
    except MemdirError as exc:  # boundary: a failed command must not end the chat
        display.show_error(str(exc))
        return True


def _dispatch(agent: ChatAgent, command: Command, display: Display) -> bool:
    name = command.name
    if name == "/exit":
        return False
    if name == "/help":
        display.show_table("commands", ("command", "what it does"), list(COMMANDS.items()))
    elif name == "/status":
        display.show_table("status", ("", ""), agent.status().rows())
    elif name == "/context":
        show_context(agent, display)
    elif name == "/compact":
        compaction = agent.compact_now()
        display.show_notice(
            f"compacted: {compaction.describe()}"
            if compaction.changed
            else "nothing to compact yet: the conversation is shorter than what is kept whole"
        )
    elif name == "/new":
        old = agent.session_id
        note = agent.new_session()
        saved = f"session note {note.path}" if note else "no session note (nothing was said)"
        display.show_notice(f"ended session {old} ({saved}); new session {agent.session_id}")
    else:
        display.show_error(f"unknown command {command.typed!r}; /help lists the commands")
    return True


def show_context(agent: ChatAgent, display: Display) -> None:
    """The ``/context`` table: per-file status, order and size, the recent notes, then the
    totals, what the session kind left out, and the counts of skills and tools."""
    report = agent.memory.context_report(session_kind=agent.session_kind)
    rows = [
        (
            f.name,
            str(f.status),
            "" if f.sort_order is None else str(f.sort_order),
            f"{f.raw_chars:,}",
            f"{f.injected_chars:,}",
            f"{f.injected_tokens:,}",
        )
        for f in (*report.files, *report.recent_notes)
    ]
    rows.append(("total", "", "", f"{report.raw_chars:,}", f"{report.injected_chars:,}",
                 f"{report.injected_tokens:,}"))  # fmt: skip
    columns = ("file", "status", "order", "raw chars", "injected chars", "injected tokens")
    display.show_table("context", columns, rows)
    if report.left_out:
        display.show_notice(
            f"left out of this {report.session_kind} session: {', '.join(report.left_out)}"
        )
    status = agent.status()
    display.show_notice(
        f"system prompt ~{report.prompt_tokens:,} tokens ({report.skills} skills, "
        f"{report.tools} tools, workspace {report.workspace}); conversation window "
        f"{status.tokens:,} / {status.window:,} tokens ({status.level})"
    )


def finish_chat(agent: ChatAgent, display: Display, wait_s: float) -> list[ExtractionResult]:
    """Extract the conversation, wait up to ``wait_s`` for it, report what it did."""
    results = agent.close(timeout=wait_s)
    for result in results:
        if not result.ran:
            display.show_notice(f"memory extraction skipped: {result.skipped_reason}")
            continue
        display.show_notice(f"memory curated ({result.method}): {result.facts_saved} facts saved")
        for update in (result.memory, result.profile):
            if update is not None and update.written:
                backup = f" (old version in {update.history})" if update.history else ""
                display.show_notice(f"{update.name} rewritten{backup}")
            elif update is not None and update.refusal:
                display.show_error(update.refusal)
    return results
