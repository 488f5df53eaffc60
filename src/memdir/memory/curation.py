"""Curation for the ``Memory`` facade: extraction, consolidation and session-end notes.

Part of the composition root. Curation loads only when one of these runs (a search
never needs it); each turns the facade's settings, model and workspace into the
arguments of ``memdir.curate``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memdir.config import Settings
from memdir.errors import NextStep, NotFoundError
from memdir.memory.composition import extraction_policy
from memdir.progress import Progress
from memdir.workspace import Workspace

if TYPE_CHECKING:
    from memdir.context import Session
    from memdir.curate import ConsolidationResult, ExtractionResult, SessionNote
    from memdir.llm import ChatModel, Message

SaveFact = Callable[[str, str | None, int | None], object]


def transcript(session: Session) -> list[Message]:
    """The messages of ``session``; ``NotFoundError`` when it does not exist."""
    if not session.exists:
        raise NotFoundError(
            f"no session {session.session_id!r} for {session.agent_id or 'the global workspace'}",
            next_step=NextStep("list them with {}", "list_sessions"),
        )
    from memdir.curate import transcript_messages

    return transcript_messages(session.load())


def extract(
    workspace: Workspace,
    session: Session,
    model: ChatModel | None,
    settings: Settings,
    save_fact: SaveFact,
    scheduled: bool,
) -> ExtractionResult:
    from memdir.curate import ExtractionTrigger, extract_after_conversation

    return extract_after_conversation(
        workspace, transcript(session), model=model, save_fact=save_fact,
        trigger=ExtractionTrigger(scheduled=scheduled, session_id=session.session_id),
        policy=extraction_policy(settings),
    )  # fmt: skip


def consolidate(
    workspace: Workspace, model: ChatModel | None, dry_run: bool, days: int,
    progress: Progress | None,
) -> ConsolidationResult:  # fmt: skip
    from memdir.curate import consolidate as run

    return run(workspace, model=model, days=days, dry_run=dry_run, progress=progress)


def end_session(
    workspace: Workspace, session: Session, model: ChatModel | None, count: int
) -> SessionNote | None:
    from memdir.curate import end_session as run

    return run(
        workspace, transcript(session), model=model, count=count, session_id=session.session_id
    )
