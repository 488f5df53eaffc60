"""Restore and undo for the ``Memory`` facade: a file put back is written like any write.

A restore goes through the write path (credential check, atomic write, indexing) and is
itself a version, attributed to the caller in force (``restore`` when none is).
"""

from __future__ import annotations

from memdir.errors import NotFoundError
from memdir.history import WorkspaceHistory, attributed, current
from memdir.memory.paths import own_path
from memdir.memory.writes import WritePath


def restore(
    history: WorkspaceHistory, writes: WritePath, version: str, path: str, reason: str | None
) -> str:
    """Put ``path`` back as it was at ``version``; a file absent then is deleted."""
    own = own_path(path, writes.source)
    full = history.resolve(version)
    content = history.content_at(full, own)
    why = reason or f"restored {own} as of version {full[:12]}"
    with attributed(tool=None if current().tool else "restore", reason=why):
        if content is None:  # the file did not exist at that version
            if (writes.workspace.root / own).exists():
                writes.delete_file(own)
            return own
        return writes.write_file(own, content.decode("utf-8"))


def undo(history: WorkspaceHistory, writes: WritePath, path: str, reason: str | None) -> str:
    """Restore ``path`` as it was before its last version; the id of the version undone."""
    own = own_path(path, writes.source)
    found = history.versions(own, limit=1)
    if not found:
        raise NotFoundError(f"{own!r} has no versions to undo")
    last = found[0].id
    before = history.before(last)
    if before is None:
        raise NotFoundError(f"{own!r} has no version before {last[:12]} to go back to")
    restore(history, writes, before, own, reason or f"undid version {last[:12]} of {own}")
    return last
