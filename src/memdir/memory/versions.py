"""History for the ``Memory`` facade: versions, diffs, restore, undo and remote sync.

A restore goes through the write path (credential check, atomic write, indexing) and is
itself a version, attributed to the caller in force (``restore`` when none is). A sync
merges a remote's versions, then the index catches up with the files that changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memdir.config import Settings
from memdir.errors import InvalidInputError, InvalidPathError, NotFoundError
from memdir.history import Version, WorkspaceHistory, attributed, current
from memdir.history.archive import LeftOut, open_archive
from memdir.history.repo import HELD
from memdir.history.sync import SyncResult
from memdir.history.trace import Trace
from memdir.home import source_of
from memdir.index import SyncReport
from memdir.memory.archive_settings import (
    AppliedSettings,
    apply_settings,
    plan_settings,
    portable_settings,
    read_archive_settings,
)
from memdir.memory.paths import own_path
from memdir.memory.writes import WritePath
from memdir.workspace import Workspace
from memdir.workspace.sources import parse_source_path


@dataclass(frozen=True)
class ArchiveImport:
    """What ``Memory.import_archive`` did."""

    version: str  # the version checked out
    legacy: bool  # a bare git bundle (written before settings travelled): no settings
    settings: AppliedSettings | None  # None: the archive had none, or they were not asked for
    left_out: tuple[LeftOut, ...]  # settings the export left out (secrets), and why


def open_history(workspace: Workspace, settings: Settings) -> tuple[WorkspaceHistory, Trace]:
    """The history of ``workspace`` and the trace of its searches, as ``settings`` say."""
    history = WorkspaceHistory.of(workspace, settings.history.enabled)
    traced = settings.trace
    trace = Trace(workspace.home, source_of(workspace.agent_id), traced.enabled, traced.max_entries)
    return history, trace


class HistoryMethods:
    """The history operations of ``Memory`` (docs/history.md)."""

    history: WorkspaceHistory
    writes: WritePath
    source: str
    home: Path

    def sync(self, progress: None = None, all_agents: bool = False) -> SyncReport:
        raise NotImplementedError  # Memory.sync

    def history_versions(self, path: str | None = None, limit: int = 20) -> list[Version]:
        """The versions of ``path`` (or of this workspace), newest first."""
        return self.history.versions(_own_history(path, self.source), limit)

    def history_diff(self, version: str, path: str | None = None) -> str:
        """The unified diff ``version`` made (to ``path``, or to this workspace)."""
        return self.history.diff(version, _own_history(path, self.source))

    def restore(self, version: str, path: str, reason: str | None = None) -> str:
        """Put ``path`` back as it was at ``version``: itself a new version; its path."""
        return restore(self.history, self.writes, version, path, reason)

    def undo(self, path: str, reason: str | None = None) -> str:
        """Undo the last version of ``path`` (restore it as it was before); the id undone."""
        return undo(self.history, self.writes, path, reason)

    def export_archive(self, target: str | Path) -> Path:
        """Write the home's history (every version of every workspace) and its settings
        without secrets to one file."""
        portable = portable_settings(self.home)
        return self.history.export_archive(Path(target), portable.text, portable.left_out)

    def import_archive(
        self, source: str | Path, settings: bool = True, index: bool = True
    ) -> ArchiveImport:
        """Check an archive out into this home (which has no workspaces yet), add its
        settings to this home's ``memdir.toml`` (not what belongs to the machine, not what
        the file sets already) and index it.

        The index is built with the settings this ``Memory`` was opened with; open the
        home again to index with the archive's (``index=False`` skips indexing here, as
        ``memdir archive import`` does before it reopens the home)."""
        with open_archive(Path(source)) as opened:
            plan: tuple[str, AppliedSettings] | None = None
            if settings and opened.settings is not None:
                plan = plan_settings(self.home, read_archive_settings(opened.settings))
            version = self.history.import_archive(opened)
            applied = apply_settings(self.home, *plan) if plan else None
            result = ArchiveImport(version, opened.legacy, applied, opened.left_out)
        if index:
            self.sync(all_agents=True)
        return result

    def sync_remote(self, url: str) -> SyncResult:
        """Merge the home's versions with the git remote ``url`` and push; then index what
        changed (every workspace of the home)."""
        result = self.history.sync_remote(url)
        if result.changed:
            self.sync(all_agents=True)
        return result


def _own_history(path: str | None, source: str) -> str | None:
    """The path whose history a session reads: one of its own workspace (the history of
    another workspace is that workspace's to read)."""
    if path is None:
        return None
    given = parse_source_path(path)
    if given.source not in (None, source):
        raise InvalidPathError(
            f"{path!r} is in another workspace; a session sees the history of its own "
            f"workspace only, so pass {given.path!r} (without the prefix) for this "
            "workspace's file"
        )
    return given.path


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
        return writes.write_file(own, _text_of(content, full, own))


def _text_of(content: bytes, version: str, path: str) -> str:
    """A version's bytes as text; one that is not UTF-8 (written outside memdir) is refused
    before anything is written."""
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"version {version[:12]} of {path!r} is not UTF-8 text (byte {exc.start}), which "
            f"memdir cannot write back; nothing was changed; restore another version of "
            f"{path!r} (its history lists them)"
        ) from exc


def undo(history: WorkspaceHistory, writes: WritePath, path: str, reason: str | None) -> str:
    """Restore ``path`` as it was before its last version; the id of the version undone."""
    own = own_path(path, writes.source)
    found = [v for v in history.versions(own, limit=20) if not v.subject.endswith(f"({HELD})")]
    if not found:  # (a held write's version changed nothing: undo the one that holds it)
        raise NotFoundError(f"{own!r} has no versions to undo")
    last = found[0].id
    before = history.before(last)
    if before is None:
        raise NotFoundError(f"{own!r} has no version before {last[:12]} to go back to")
    restore(history, writes, before, own, reason or f"undid version {last[:12]} of {own}")
    return last
