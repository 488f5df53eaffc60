"""Reviewable curation: with ``curate.review = true`` curation changes nothing by itself.

Consolidation and extraction rewrite MEMORY.md (extraction also USER.md) through the loss
guard (``curate.guard.replace_guarded``). Under review, each rewrite the guard accepts is
kept as a proposal (``memory.proposals``, kind ``curation``) holding the whole new text and
the digest of the text it was made from, instead of being written. Extraction's appends,
its new facts and its daily-note entry, are held (``curate.holding``) and kept as one
proposal of kind ``append``: they come from one conversation, and the save path writes
each fact's line into a daily note too, so one proposal shows the whole of what the
conversation would add. A person lists them (``memdir proposals``), reads one as a diff
(``memdir proposals show ID``) and accepts it (a version, attributed to the curation
that made it and to whoever accepted it; a rewrite is refused when the file changed
since; an append's facts go through the save path then, so its duplicate and
supersession decisions are made against the facts of that moment) or rejects it.

Whatever the setting, an agent's extraction does not rewrite USER.md, the file every
agent's prompt reads from the global workspace (it has an owner: ``memory.proposals``):
the rewrite is a proposal of kind ``shared``, as an agent token's write of it is.

Filing is idempotent (``proposals.file_proposal``): a run retried on the same transcript
finds its proposal waiting and files nothing new. A chat's background extraction follows
the setting too (``extract_for_review``).
"""

from __future__ import annotations

import datetime as dt
import logging
import secrets
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memdir.curate.guard import Rewrite, proposing, unified_diff
from memdir.curate.holding import Held, held, holding
from memdir.errors import EditError, InvalidInputError, MemdirError
from memdir.history import attributed
from memdir.memory.proposals import FOLDER, Proposal, file_proposal, load, shared_digest
from memdir.workspace import Workspace, daily_note_name
from memdir.workspace.atomic import read_markdown
from memdir.workspace.revisions import content_sha256

if TYPE_CHECKING:
    from memdir.curate import ExtractedFact, ExtractionResult
    from memdir.facts import SaveOutcome
    from memdir.llm import Message
    from memdir.workspace import NoteLocation

logger = logging.getLogger(__name__)

CURATION = "curation"
APPEND = "append"
SHARED = "shared"


class Review:
    """One curation run under review: the proposals it made, and why (set after the run)."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.reason = ""
        self.ids: list[str] = []


@contextmanager
def reviewed(workspace: Workspace, on: bool, tool: str) -> Iterator[Review]:
    """Around a curation: with ``on``, its guarded rewrites and its appends become
    proposals, made when the block ends with the ``reason`` the caller set. An agent's
    rewrite of a shared file (USER.md) is a proposal whether ``on`` or not."""
    review = Review(tool)
    agent = workspace.agent_id is not None
    if not on and not agent:
        yield review
        return
    with ExitStack() as stack:
        rewrites = stack.enter_context(proposing(None if on else workspace.global_root))
        held = stack.enter_context(holding()) if on else Held()
        yield review
    made = [_propose(workspace, rewrite, review) for rewrite in rewrites]
    if held:
        made.append(_propose_appends(workspace, held, review))
    review.ids.extend(proposal.id for proposal in made)


def extract_for_review(
    workspace: Workspace, transcript: Sequence[Message], **options: Any
) -> ExtractionResult:
    """``extract_after_conversation`` whose rewrites and appends are proposals (a chat's
    background extraction under ``curate.review``: ``curate.ExtractionRunner(extract=...)``)."""
    return _extract_reviewed(workspace, transcript, True, **options)


def extract_with_owner(
    workspace: Workspace, transcript: Sequence[Message], **options: Any
) -> ExtractionResult:
    """``extract_after_conversation`` not under review: it writes as ever, except that an
    agent's rewrite of USER.md is a proposal (a chat's background extraction)."""
    return _extract_reviewed(workspace, transcript, False, **options)


def _extract_reviewed(
    workspace: Workspace, transcript: Sequence[Message], on: bool, **options: Any
) -> ExtractionResult:
    from memdir.curate import extract_after_conversation

    with reviewed(workspace, on, "extract") as review:
        result = extract_after_conversation(workspace, transcript, **options)
        review.reason = f"extracted from the conversation: {result.reason}"
    return replace(result, proposals=tuple(review.ids)) if review.ids else result


def propose_facts(
    workspace: Workspace, facts: Sequence[ExtractedFact], tool: str, reason: str
) -> tuple[str, ...]:
    """Keep ``facts`` as one append proposal instead of saving them (a compaction's flush
    under review); a fact a save would refuse (a credential) is left out, and logged."""
    with reviewed(workspace, True, tool) as review:
        hold = held()
        assert hold is not None  # reviewed(on=True) holds
        for fact in facts:
            try:
                hold.hold_fact(fact.text, fact.category, fact.importance)
            except MemdirError as exc:
                logger.warning("%s left a fact out of its proposal: %s", tool, exc)
        review.reason = reason
    return tuple(review.ids)


def _new_id() -> str:
    return "p-" + secrets.token_hex(5)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _propose(workspace: Workspace, rewrite: Rewrite, review: Review) -> Proposal:
    reason = review.reason or f"{review.tool} rewrote {rewrite.name}"
    if workspace.agent_id is not None and rewrite.root == workspace.global_root:
        # a shared file (USER.md): its owner accepts it into the global workspace
        proposal = Proposal(
            id=_new_id(), agent=workspace.agent_id, path=rewrite.name, content=rewrite.new,
            base_sha256=shared_digest(workspace.home, rewrite.name), created=_now(),
            kind=SHARED, tool=review.tool, reason=reason,
        )  # fmt: skip
        return file_proposal(workspace.home, proposal)
    path = rewrite.root.relative_to(workspace.root).joinpath(rewrite.name).as_posix()
    proposal = Proposal(
        id=_new_id(), agent=workspace.agent_id or "", path=path, content=rewrite.new,
        base_sha256=content_sha256(rewrite.old), created=_now(), kind=CURATION,
        tool=review.tool, reason=reason,
    )  # fmt: skip
    return file_proposal(workspace.home, proposal)


def _propose_appends(workspace: Workspace, held: Held, review: Review) -> Proposal:
    """One proposal of what a run would append: its daily entry (extraction makes at most
    one) and its facts."""
    first = held.entries[0] if held.entries else None
    day = first.day if first is not None else dt.date.today()
    proposal = Proposal(
        id=_new_id(), agent=workspace.agent_id or "", path=daily_note_name(day),
        content="\n".join(entry.text for entry in held.entries), base_sha256="",
        created=_now(), kind=APPEND, tool=review.tool,
        reason=review.reason or f"{review.tool} found what to keep",
        facts=tuple(asdict(fact) for fact in held.facts),
        heading=first.heading if first is not None else "",
    )  # fmt: skip
    return file_proposal(workspace.home, proposal)


def current_text(workspace: Workspace, path: str) -> str:
    """The text of ``path`` in the workspace itself ("" when it has none)."""
    target = workspace.root / path
    return read_markdown(target) if target.is_file() else ""


def proposal_diff(home: Path, proposal_id: str) -> tuple[Proposal, str]:
    """The proposal and what it would change: a unified diff from the file as it is now
    to its text; for an append, the lines it would add and the facts it would save."""
    proposal = load(home, proposal_id)
    if proposal.kind == APPEND:
        return proposal, append_preview(proposal)
    workspace = Workspace(home, proposal.agent or None)
    before = current_text(workspace, proposal.path) if proposal.kind == CURATION else (
        current_text(Workspace(home), proposal.path)
    )  # fmt: skip
    return proposal, unified_diff(before, proposal.content, proposal.path)


def append_preview(proposal: Proposal) -> str:
    """What accepting an append proposal adds: the entry at the end of its daily note
    and each fact, saved through the save path (a line in the note of the day accepted)."""
    lines: list[str] = []
    if proposal.content.strip():
        lines += [f"--- a/{proposal.path}", f"+++ b/{proposal.path} (appended at the end)"]
        block = _entry_block(proposal)
        lines += [f"+{line}" for line in block.splitlines()]
    if proposal.facts:
        lines.append(f"facts to save ({len(proposal.facts)}), each through the save path:")
        for fact in proposal.facts:
            shown = [f"{key}: {fact[key]}" for key in ("category", "importance", "valid_until")
                     if fact.get(key) is not None]  # fmt: skip
            extra = f"  ({', '.join(shown)})" if shown else ""
            lines.append(f"+ {fact['text']}{extra}")
    return "\n".join(lines) + "\n" if lines else ""


def _entry_block(proposal: Proposal) -> str:
    heading = f"{proposal.heading}\n" if proposal.heading else ""
    return f"{heading}{proposal.content}"


class CurationWriter(Protocol):
    """What accepting a curation proposal needs of a ``Memory`` of its workspace."""

    @property
    def workspace(self) -> Workspace: ...

    def write_file(
        self, path: str, content: str, *, expected_sha256: str | None = None,
        create_only: bool = False,
    ) -> str: ...  # fmt: skip


def _own(memory: CurationWriter | AppendWriter, proposal: Proposal, kind: str) -> None:
    if proposal.kind != kind or (memory.workspace.agent_id or "") != proposal.agent:
        raise InvalidInputError(f"{proposal.id} is not a {kind} proposal of this workspace")


def accepted_reason(proposal: Proposal, accepter: str) -> str:
    """The reason a version made by accepting ``proposal`` carries."""
    by = f" by {accepter}" if accepter else ""
    return f"accepted proposal {proposal.id}{by}: {proposal.reason}"


def accept_curation(memory: CurationWriter, proposal: Proposal, accepter: str = "") -> None:
    """Write a curation proposal's text through ``memory`` (its workspace's), a version
    attributed to the curation, only over the text it was made from."""
    _own(memory, proposal, CURATION)
    if content_sha256(current_text(memory.workspace, proposal.path)) != proposal.base_sha256:
        raise EditError(
            f"{proposal.path} changed since proposal {proposal.id} was made; reject it "
            f"(`memdir proposals reject {proposal.id}`) and curate again"
        )
    reason = accepted_reason(proposal, accepter)
    with attributed(tool=proposal.tool or "curation", reason=reason):
        if (memory.workspace.root / proposal.path).is_file():  # only over the text read
            memory.write_file(proposal.path, proposal.content, expected_sha256=proposal.base_sha256)
        else:
            memory.write_file(proposal.path, proposal.content, create_only=True)
    (memory.workspace.home / FOLDER / f"{proposal.id}.json").unlink(missing_ok=True)


class AppendWriter(Protocol):
    """What accepting an append proposal needs of a ``Memory`` of its workspace."""

    @property
    def workspace(self) -> Workspace: ...

    def save(
        self, content: str, category: str | None = None, importance: int | None = None,
        valid_until: dt.datetime | None = None,
    ) -> SaveOutcome: ...  # fmt: skip

    def append_daily(self, text: str, date: dt.datetime | None = None) -> NoteLocation: ...


def accept_append(memory: AppendWriter, proposal: Proposal, accepter: str = "") -> int:
    """Save an append proposal's facts through ``memory``'s save path now (a repeat of a
    fact saved since is no new fact) and append its entry unless its note holds it
    already; each a version naming the proposal and ``accepter``. Returns the facts
    that are new or supersede one."""
    _own(memory, proposal, APPEND)
    added = 0
    with attributed(tool=proposal.tool or "extract", reason=accepted_reason(proposal, accepter)):
        for fact in proposal.facts:
            until = fact.get("valid_until")
            outcome = memory.save(
                fact["text"], category=fact.get("category"), importance=fact.get("importance"),
                valid_until=dt.datetime.fromisoformat(until) if until else None,
            )  # fmt: skip
            added += outcome.action != "none"
        block = _entry_block(proposal)
        if block.strip() and block.strip() not in current_text(memory.workspace, proposal.path):
            day = dt.date.fromisoformat(Path(proposal.path).stem)
            memory.append_daily(block, dt.datetime.combine(day, dt.time()))
    (memory.workspace.home / FOLDER / f"{proposal.id}.json").unlink(missing_ok=True)
    return added
