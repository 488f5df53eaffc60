"""Reviewable curation: with ``curate.review = true`` a rewrite is a proposal, not a change.

Consolidation and extraction rewrite MEMORY.md (extraction also USER.md) through the loss
guard (``curate.guard.replace_guarded``). Under review, each rewrite the guard accepts is
kept as a proposal (``memory.proposals``, kind ``curation``) holding the whole new text and
the digest of the text it was made from, instead of being written. A person lists it
(``memdir proposals``), reads it as a diff (``memdir proposals show ID``) and accepts it
(written as a version, attributed to the curation that made it; refused when the file
changed since) or rejects it. Extraction's facts and its daily-note entry are appended as
ever: an append loses nothing and is a version of its own. A chat's background extraction
follows the setting too (``extract_for_review``).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memdir.curate.guard import Rewrite, proposing, unified_diff
from memdir.errors import EditError, InvalidInputError
from memdir.history import attributed
from memdir.memory.proposals import FOLDER, Proposal, load
from memdir.workspace import Workspace
from memdir.workspace.atomic import read_markdown, write_atomic
from memdir.workspace.revisions import content_sha256

if TYPE_CHECKING:
    from memdir.curate import ExtractionResult
    from memdir.llm import Message

CURATION = "curation"


class Review:
    """One curation run under review: the proposals it made, and why (set after the run)."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.reason = ""
        self.ids: list[str] = []


@contextmanager
def reviewed(workspace: Workspace, on: bool, tool: str) -> Iterator[Review]:
    """Around a curation: with ``on``, its guarded rewrites become proposals, made when
    the block ends with the ``reason`` the caller set."""
    review = Review(tool)
    if not on:
        yield review
        return
    with proposing() as rewrites:
        yield review
    review.ids.extend(_propose(workspace, rewrite, review).id for rewrite in rewrites)


def extract_for_review(
    workspace: Workspace, transcript: Sequence[Message], **options: Any
) -> ExtractionResult:
    """``extract_after_conversation`` whose rewrites are proposals (a chat's background
    extraction under ``curate.review``: ``curate.ExtractionRunner(extract=...)``)."""
    from memdir.curate import extract_after_conversation

    with reviewed(workspace, True, "extract") as review:
        result = extract_after_conversation(workspace, transcript, **options)
        review.reason = f"extracted from the conversation: {result.reason}"
    return replace(result, proposals=tuple(review.ids)) if review.ids else result


def _propose(workspace: Workspace, rewrite: Rewrite, review: Review) -> Proposal:
    path = rewrite.root.relative_to(workspace.root).joinpath(rewrite.name).as_posix()
    proposal = Proposal(
        id="p-" + secrets.token_hex(5), agent=workspace.agent_id or "", path=path,
        content=rewrite.new, base_sha256=content_sha256(rewrite.old),
        created=datetime.now(UTC).isoformat(timespec="seconds"), kind=CURATION,
        tool=review.tool, reason=review.reason or f"{review.tool} rewrote {path}",
    )  # fmt: skip
    folder = workspace.home / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / f"{proposal.id}.json", json.dumps(asdict(proposal), indent=1))
    return proposal


def current_text(workspace: Workspace, path: str) -> str:
    """The text of ``path`` in the workspace itself ("" when it has none)."""
    target = workspace.root / path
    return read_markdown(target) if target.is_file() else ""


def proposal_diff(home: Path, proposal_id: str) -> tuple[Proposal, str]:
    """The proposal and the unified diff from the file as it is now to its text."""
    proposal = load(home, proposal_id)
    workspace = Workspace(home, proposal.agent or None)
    before = current_text(workspace, proposal.path) if proposal.kind == CURATION else (
        current_text(Workspace(home), proposal.path)
    )  # fmt: skip
    return proposal, unified_diff(before, proposal.content, proposal.path)


class CurationWriter(Protocol):
    """What accepting a curation proposal needs of a ``Memory`` of its workspace."""

    @property
    def workspace(self) -> Workspace: ...

    def write_file(
        self, path: str, content: str, *, expected_sha256: str | None = None,
        create_only: bool = False,
    ) -> str: ...  # fmt: skip


def accept_curation(memory: CurationWriter, proposal: Proposal) -> None:
    """Write a curation proposal's text through ``memory`` (its workspace's), a version
    attributed to the curation, only over the text it was made from."""
    if proposal.kind != CURATION or (memory.workspace.agent_id or "") != proposal.agent:
        raise InvalidInputError(f"{proposal.id} is not a curation proposal of this workspace")
    if content_sha256(current_text(memory.workspace, proposal.path)) != proposal.base_sha256:
        raise EditError(
            f"{proposal.path} changed since proposal {proposal.id} was made; reject it "
            f"(`memdir proposals reject {proposal.id}`) and curate again"
        )
    reason = f"accepted proposal {proposal.id}: {proposal.reason}"
    with attributed(tool=proposal.tool or "curation", reason=reason):
        if (memory.workspace.root / proposal.path).is_file():  # only over the text read
            memory.write_file(proposal.path, proposal.content, expected_sha256=proposal.base_sha256)
        else:
            memory.write_file(proposal.path, proposal.content, create_only=True)
    (memory.workspace.home / FOLDER / f"{proposal.id}.json").unlink(missing_ok=True)
