"""Sync a home's history with a git remote the user owns: fetch, merge, push.

Both sides' versions meet in a merge. Daily notes (``memory/*.md``) merge line by line
keeping both sides (git's ``union`` driver, set in the ``.gitattributes`` memdir
writes), so an appended line is never lost. Any other file both sides changed at the
same place keeps this home's text in place, and the other side's whole text is kept
beside it as ``<name>.conflict-<version>.md``: a reviewable conflict, searchable, never
silently lost. The merge is a version (tool ``sync``) that names those copies. When the
remote moved while we merged, the push is refused and the round runs again.
A remote holding anything but workspace files is refused before the merge
(``history.remote_tree``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memdir.errors import InvalidInputError, StoreError
from memdir.history.conflicts import conflicted, keep_both
from memdir.history.remote_tree import check_fetched_tree
from memdir.history.repo import HomeHistory

REMOTE = "memdir-sync"
BRANCH = "memdir"  # the branch memdir pushes and fetches on the remote
TRACKING = f"refs/remotes/{REMOTE}/{BRANCH}"
ATTEMPTS = 5


@dataclass(frozen=True)
class SyncResult:
    """What a sync did: the files it changed here and the conflict copies it kept."""

    changed: tuple[str, ...]  # home-relative paths changed by the merge
    conflicts: tuple[str, ...]  # home-relative paths of the copies of the other side's text
    pushed: bool


def sync_remote(history: HomeHistory, url: str) -> SyncResult:
    """Merge the remote's versions into this home and push the result (see module)."""
    if not isinstance(url, str) or not url.strip() or url.startswith("-"):
        raise InvalidInputError(
            f"invalid remote {url!r}: give a git URL or the path of a (bare) repository"
        )
    url = url.strip()
    if Path(url).exists():  # a local path means this folder, not one inside the home
        url = str(Path(url).resolve())
    with history.locked():
        history.start()
        history.record_outside()
        _set_remote(history, url)
        before = history.git("rev-parse", "HEAD").strip()
        conflicts: list[str] = []
        for _ in range(ATTEMPTS):
            history.git("fetch", "-q", REMOTE, f"+refs/heads/{BRANCH}:{TRACKING}", check=False)
            if _exists(history, TRACKING):
                check_fetched_tree(history, TRACKING, url)
                conflicts += _merge(history)
            pushed = history.run("push", "-q", REMOTE, f"HEAD:refs/heads/{BRANCH}")
            if pushed.returncode == 0:
                changed = history.git("diff", "--name-only", before, "HEAD").split("\n")
                return SyncResult(tuple(p for p in changed if p), tuple(conflicts), True)
            error = pushed.stderr.decode("utf-8", "replace")
            if "rejected" not in error and "fetch first" not in error:
                raise StoreError(f"git push to {url} failed: {error.strip()}")
        raise StoreError(f"the remote {url} kept moving during {ATTEMPTS} sync rounds; sync again")


def _set_remote(history: HomeHistory, url: str) -> None:
    if history.run("remote", "get-url", REMOTE).returncode == 0:
        history.git("remote", "set-url", REMOTE, url)
    else:
        history.git("remote", "add", REMOTE, url)


def _exists(history: HomeHistory, ref: str) -> bool:
    return history.run("rev-parse", "-q", "--verify", ref).returncode == 0


def _merge(history: HomeHistory) -> list[str]:
    """Merge the fetched branch; conflicts keep ours in place and theirs beside it."""
    theirs = history.git("rev-parse", "--short=12", TRACKING).strip()
    merged = history.run(
        "merge", "-q", "--no-edit", "--no-ff", "--allow-unrelated-histories", "-m",
        f"sync: merge {theirs}", TRACKING,
    )  # fmt: skip
    if merged.returncode == 0:
        return []
    if not conflicted(history):
        history.git("merge", "--abort", check=False)
        raise StoreError(f"merging the remote failed: {merged.stderr.decode(errors='replace')}")
    return keep_both(history, theirs)
