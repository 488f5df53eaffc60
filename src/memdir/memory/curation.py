"""Curation for the ``Memory`` facade: extraction, consolidation and session-end notes.

Part of the composition root. Curation loads only when one of these runs (a search
never needs it); each turns the facade's settings, model and workspace into the
arguments of ``memdir.curate``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from memdir.config import Settings
from memdir.errors import NextStep, NotFoundError
from memdir.history import WorkspaceHistory, attributed
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
    history: WorkspaceHistory,
) -> ExtractionResult:
    """Extraction; its saves are versions, and so are its MEMORY.md and USER.md rewrites."""
    from memdir.curate import ExtractionTrigger, extract_after_conversation
    from memdir.memory.curation_review import reviewed

    why = f"extracted from session {session.session_id}"
    with attributed(tool="extract", session=session.session_id):
        with reviewed(workspace, settings.curate.review, "extract") as review:
            result = extract_after_conversation(
                workspace, transcript(session), model=model, save_fact=save_fact,
                trigger=ExtractionTrigger(scheduled=scheduled, session_id=session.session_id),
                policy=extraction_policy(settings),
            )  # fmt: skip
            review.reason = f"{why}: {result.reason}" if result.reason else why
        history.record_all("extract", why)
    return replace(result, proposals=tuple(review.ids)) if review.ids else result


def consolidate(
    workspace: Workspace, model: ChatModel | None, dry_run: bool, days: int,
    progress: Progress | None, history: WorkspaceHistory, review: bool = False,
) -> ConsolidationResult:  # fmt: skip
    """Consolidation; a rewrite of MEMORY.md is a version whose reason says what it did
    (with ``review``, a proposal: ``memory.curation_review``)."""
    from memdir.curate import consolidate as run
    from memdir.memory.curation_review import reviewed

    with reviewed(workspace, review and not dry_run, "consolidate") as proposals:
        result = run(workspace, model=model, days=days, dry_run=dry_run, progress=progress)
        why = f"promoted {len(result.added)} entries, merged {result.merged} ({result.method})"
        proposals.reason = why
    if proposals.ids:
        return replace(result, proposals=tuple(proposals.ids))
    if result.written:
        history.record_all("consolidate", why)
    return result


def end_session(
    workspace: Workspace, session: Session, model: ChatModel | None, count: int,
    history: WorkspaceHistory,
) -> SessionNote | None:  # fmt: skip
    from memdir.curate import end_session as run

    note = run(
        workspace, transcript(session), model=model, count=count, session_id=session.session_id
    )
    history.record_all("end_session", f"the end of session {session.session_id}")
    return note
