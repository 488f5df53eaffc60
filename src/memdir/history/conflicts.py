"""Finishing a merge in progress as ``memdir sync`` does: this home's text in place, the
other side's whole text beside it as ``<name>.conflict-<version>.md``.

``history.sync`` calls ``keep_both`` after a merge that conflicted; ``history.repo``
calls ``finish_interrupted_merge`` before it records anything, for a sync killed between
git's merge and its own resolution (``MERGE_HEAD`` left, files holding git's conflict
markers, which the next version would otherwise record). It knows the repository only
as something that runs git (``_Git``), so ``repo`` can use it without a cycle.
"""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath
from typing import Protocol

from memdir.history.attribution import Attribution


class _Git(Protocol):
    root: Path

    def git(self, *args: str, check: bool = True, author: str | None = None) -> str: ...

    def run(self, *args: str, author: str | None = None) -> subprocess.CompletedProcess[bytes]: ...


def conflicted(history: _Git) -> list[str]:
    """The home-relative paths git could not merge."""
    unmerged = history.git("diff", "--name-only", "--diff-filter=U").split("\n")
    return [p for p in unmerged if p]


def finish_interrupted_merge(history: _Git) -> list[str]:
    """Finish the merge of a sync that was killed before it committed (``MERGE_HEAD`` is
    left, files hold git's conflict markers) as the sync would have: this home's text in
    place, the other side's beside it. Else the next version would record the markers.
    Run under the history lock; the conflict copies it kept."""
    found = history.run("rev-parse", "-q", "--verify", "--short=12", "MERGE_HEAD")
    if found.returncode != 0:
        return []
    return keep_both(history, found.stdout.decode().strip())


def keep_both(history: _Git, theirs: str) -> list[str]:
    """Resolve the merge in progress: ours in place, theirs beside as a conflict copy."""
    paths = conflicted(history)
    copies = []
    for path in paths:
        ours = _stage(history, 2, path)
        other = _stage(history, 3, path)
        target = history.root / path
        if ours is None:  # deleted here, changed there: keep their text in place
            target.write_bytes(other or b"")
        else:
            target.write_bytes(ours)
            if other is not None:
                copy = _copy_path(path, theirs)
                (history.root / copy).write_bytes(other)
                history.git("add", "--", copy)
                copies.append(copy)
        history.git("add", "--", path)
    reason = (
        "the other side's text of " + ", ".join(paths) + " kept as " + ", ".join(copies)
        if paths
        else "the merge of an interrupted sync, finished"
    )
    who = Attribution(tool="sync", reason=reason)
    history.git(
        "commit", "-q", "--no-verify", "-m",
        f"sync: merge {theirs} ({len(copies)} conflicts kept)\n\nTool: sync\nReason: {reason}",
        author=who.agent,
    )  # fmt: skip
    return copies


def _stage(history: _Git, stage: int, path: str) -> bytes | None:
    done = history.run("show", f":{stage}:{path}")
    return done.stdout if done.returncode == 0 else None


def _copy_path(path: str, version: str) -> str:
    """``<stem>.conflict-<version>.md`` beside ``path``, the stem cut (UTF-8-safe) so the
    name stays within 255 bytes, the limit of memdir and of the file systems."""
    pure = PurePosixPath(path)
    tail = f".conflict-{version[:8]}{pure.suffix}"
    stem = pure.stem.encode("utf-8")[: 255 - len(tail.encode("utf-8"))].decode("utf-8", "ignore")
    return str(pure.with_name(stem + tail))
