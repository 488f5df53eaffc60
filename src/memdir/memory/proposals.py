"""Shared files have an owner: an agent's change to a file every agent reads is a proposal.

USER.md lives in the global workspace only (one human for every agent): an agent's write
or edit of it lands in the file every other agent's prompt carries. Who may change it is
whoever may write the global workspace: a person (the CLI, the Python API) or the admin
token. A request made with an agent's own token (``acting_for_agent``: the REST and MCP
binding sets it) does not write the file; its change is kept as a proposal under
``<home>/proposals/<id>.json``, listed by ``memdir proposals`` and applied by
``memdir proposals accept ID`` (``reject`` drops it). A proposal holds the whole new text
and the digest of the text it was made from: accepting it after the file changed since
is refused, so nobody's edit is overwritten unseen.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from memdir.errors import (
    AccessDeniedError,
    EditError,
    InvalidInputError,
    NotFoundError,
)
from memdir.facts.safety import reject_new_secrets
from memdir.workspace import Workspace, lock_file, validate_relative_path
from memdir.workspace.atomic import write_atomic
from memdir.workspace.bootstrap import GLOBAL_ONLY_FILES
from memdir.workspace.edits import replaced

FOLDER = "proposals"
_agent_only: ContextVar[bool] = ContextVar("memdir_agent_only", default=False)


@contextlib.contextmanager
def acting_for_agent() -> Iterator[None]:
    """Within the block, writes come from an agent's own token: no global file changes."""
    token = _agent_only.set(True)
    try:
        yield
    finally:
        _agent_only.reset(token)


def agent_only() -> bool:
    return _agent_only.get()


@dataclass(frozen=True)
class Proposal:
    """A change to a shared file that a person accepts or rejects."""

    id: str
    agent: str
    path: str
    content: str  # the whole new text
    base_sha256: str  # of the text it was made from ("" when the file did not exist)
    created: str
    kind: str = "shared"  # "curation": a rewrite by consolidation or extraction under review
    tool: str = ""  # what made it (consolidate, extract)
    reason: str = ""  # why (the curation's summary)
    # kind "append" (extraction's appends under review): ``content`` is the daily-note
    # entry for ``path`` under ``heading``; ``facts`` the facts to save (Memory.save's
    # arguments: text, category, importance, valid_until)
    facts: tuple[dict[str, Any], ...] = ()
    heading: str = ""


def _digest(text: str | None) -> str:
    return "" if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _current(workspace: Workspace, path: str) -> str | None:
    shared = workspace.global_root / path
    return shared.read_text(encoding="utf-8") if shared.is_file() else None


def shared_digest(home: Path, path: str) -> str:
    """The digest of the shared file ``path`` as accepting a proposal compares it."""
    return _digest(_current(Workspace(home), path))


def guard_shared(workspace: Workspace, path: str, content: str | None = None,
                 edit: tuple[str, str, bool] | None = None) -> None:  # fmt: skip
    """Refuse an agent token's write (``content``) or edit (``old, new, replace_all``) of a
    shared file, keeping it as a proposal; anything else passes."""
    if workspace.agent_id is None or not agent_only():
        return
    path = str(validate_relative_path(path))
    if path not in GLOBAL_ONLY_FILES:
        return
    before = _current(workspace, path)
    if edit is not None:
        content, _ = replaced(before or "", edit, path, "; nothing was proposed")
    assert content is not None
    reject_new_secrets(before or "", content, f"the change to {path!r}")
    proposal = Proposal(
        id="p-" + secrets.token_hex(5), agent=workspace.agent_id, path=path, content=content,
        base_sha256=_digest(before), created=datetime.now(UTC).isoformat(timespec="seconds"),
    )  # fmt: skip
    proposal = file_proposal(workspace.home, proposal)
    raise AccessDeniedError(
        f"{path!r} is shared by every agent and this token may change only the files of "
        f"agent {workspace.agent_id!r}; nothing was written: the change was kept as "
        f"proposal {proposal.id} for a person to accept (`memdir proposals accept "
        f"{proposal.id}`)"
    )


def refuse_shared(workspace: Workspace, path: str, action: str) -> None:
    """Refuse an agent token's ``action`` (insert, rename, delete) on a shared file: only a
    whole new text can be proposed."""
    if workspace.agent_id is None or not agent_only():
        return
    path = str(validate_relative_path(path))
    if path in GLOBAL_ONLY_FILES:
        raise AccessDeniedError(
            f"{path!r} is shared by every agent and this token may change only the files of "
            f"agent {workspace.agent_id!r}, so it may not {action} it; nothing was changed. "
            f"To propose a change, write the whole new text of {path!r} (it is kept as a "
            f"proposal for a person to accept)"
        )


def list_proposals(home: Path) -> list[Proposal]:
    """The proposals waiting under ``home``, oldest first."""
    folder = home / FOLDER
    found = [_load(path) for path in folder.glob("p-*.json")] if folder.is_dir() else []
    return sorted(found, key=lambda p: (p.created, p.id))


def _load(path: Path) -> Proposal:
    fields = json.loads(path.read_text(encoding="utf-8"))
    fields["facts"] = tuple(fields.get("facts", ()))
    return Proposal(**fields)


def _change(proposal: Proposal) -> str:
    """What a proposal would do, apart from who filed it when: its kind, workspace,
    target, base and content (an append's heading holds the time; it is left out)."""
    return json.dumps(
        [proposal.kind, proposal.agent, proposal.path, proposal.base_sha256,
         proposal.content, list(proposal.facts)], sort_keys=True,
    )  # fmt: skip


def file_proposal(home: Path, proposal: Proposal) -> Proposal:
    """Keep ``proposal`` under ``home``, unless one waiting already makes the same change
    (same target, base and content: a retried or repeated run): that one is returned."""
    folder = home / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with lock_file(folder / ".lock", create=True):
        same = _change(proposal)
        for waiting in list_proposals(home):
            if _change(waiting) == same:
                return waiting
        write_atomic(folder / f"{proposal.id}.json", json.dumps(asdict(proposal), indent=1))
    return proposal


def _file(home: Path, proposal_id: str) -> Path:
    if not proposal_id.startswith("p-") or not proposal_id[2:].isalnum():
        raise InvalidInputError(
            f"{proposal_id!r} is not a proposal id; they look like p-0a1b2c3d4e"
        )
    path = home / FOLDER / f"{proposal_id}.json"
    if not path.is_file():
        raise NotFoundError(f"no proposal {proposal_id!r}; see them with `memdir proposals`")
    return path


class SharedWriter(Protocol):
    """What accepting needs of a ``Memory``: its home and its write path."""

    @property
    def home(self) -> Path: ...

    def write_file(self, path: str, content: str) -> str: ...


def accept(memory: SharedWriter, proposal_id: str) -> Proposal:
    """Write the proposal's text to the shared file through ``memory`` (the global
    workspace's, a person's), if the file is as it was when the proposal was made."""
    home = memory.home
    path = _file(home, proposal_id)
    proposal = _load(path)
    workspace = Workspace(home, proposal.agent)
    if _digest(_current(workspace, proposal.path)) != proposal.base_sha256:
        raise EditError(
            f"{proposal.path} changed since proposal {proposal_id} was made; reject it "
            f"(`memdir proposals reject {proposal_id}`) and make the change by hand"
        )
    memory.write_file(proposal.path, proposal.content)  # refused for an agent token
    os.unlink(path)
    return proposal


def load(home: Path, proposal_id: str) -> Proposal:
    """The proposal ``proposal_id`` waiting under ``home``."""
    return _load(_file(home, proposal_id))


def reject(home: Path, proposal_id: str) -> Proposal:
    path = _file(home, proposal_id)
    proposal = _load(path)
    os.unlink(path)
    return proposal
