"""The history of one workspace: what the write path records and what a caller may see.

A session sees the versions of its own workspace only (``workspace/`` for the global
one, ``agents/<id>/`` for an agent's), with paths relative to that workspace as every
other interface names them. Recording never fails a write: the file is written and
indexed whatever git says; a history that cannot be written is logged (once, when git
is missing).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from memdir.errors import ConfigError, MemdirError, NotFoundError
from memdir.history.archive import LeftOut, OpenedArchive, export_archive, import_archive
from memdir.history.attribution import attributed, current
from memdir.history.committer import committer_for
from memdir.history.repo import NO_GIT, HomeHistory, Version, git_available
from memdir.history.sync import SyncResult, sync_remote
from memdir.workspace import Workspace
from memdir.workspace.paths import validate_relative_path

log = logging.getLogger(__name__)
_warned_no_git = False


class Change:
    """The files one write touched (workspace-relative), recorded when the write ends."""

    def __init__(self, tool: str | None = None, appended: bool = False) -> None:
        self.tool = tool  # what the version says ran when no tool or command said
        self.appended = appended  # the write only added lines at the end (a note)
        self.paths: list[str] = []

    def touched(self, *paths: str) -> None:
        self.paths.extend(str(validate_relative_path(p)) for p in paths)


class WorkspaceHistory:
    """Versions of the workspace at ``prefix`` of the home ``root`` (``enabled``: recorded)."""

    def __init__(self, root: Path, prefix: str, agent: str | None, enabled: bool) -> None:
        self.repo = HomeHistory(root)
        self.prefix = prefix.rstrip("/") + "/"
        self.agent = agent
        self.enabled = enabled

    @classmethod
    def of(cls, workspace: Workspace, enabled: bool) -> WorkspaceHistory:
        """The history of ``workspace`` (in its home's repository)."""
        prefix = workspace.root.relative_to(workspace.home).as_posix()
        return cls(workspace.home, prefix, workspace.agent_id, enabled)

    @property
    def recording(self) -> bool:
        global _warned_no_git
        if not self.enabled:
            return False
        if git_available():
            return True
        if not _warned_no_git:
            _warned_no_git = True
            log.warning("%s; memory works as before, without versions", NO_GIT)
        return False

    @contextmanager
    def change(self, tool: str | None = None, appended: bool = False) -> Iterator[Change]:
        """Around a write: what it touched becomes a version, committed off the write path
        (``history.committer``) with the attribution in force here."""
        change = Change(tool, appended)
        if not self.recording:
            yield change
            return
        if not self.repo.started:
            self._start()  # so a first version holds this write alone
        committer = committer_for(self.repo)
        committer.begin()
        try:
            yield change
            self._record([self.prefix + p for p in change.paths], tool, later=change)
        finally:
            committer.end()

    def flush(self) -> None:
        """Wait until the versions this process queued for the home are committed."""
        committer_for(self.repo).flush()

    def record_all(self, tool: str, reason: str) -> None:
        """Record every change of this workspace (after a curation that wrote several)."""
        with attributed(tool=tool, reason=reason):
            self._record([self.prefix.rstrip("/")])

    def _start(self) -> None:
        try:
            self.repo.start()
        except (MemdirError, OSError) as exc:
            log.warning("could not start the history of %s: %s", self.repo.root, exc)

    def _record(
        self, specs: list[str], tool: str | None = None, later: Change | None = None
    ) -> None:
        if not specs or not self.recording:
            return
        who = current()
        if who.agent is None and self.agent is not None:
            who = replace(who, agent=self.agent)
        if who.tool is None and tool is not None:
            who = replace(who, tool=tool)
        if later is not None:  # the bytes the write left, committed off the write path
            contents = {spec: _read(self.repo.root / spec) for spec in specs}
            committer_for(self.repo).submit(contents, who, later.appended)
            return
        committer_for(self.repo).submit_folders(specs, who)  # in order, off the caller's path

    def pick_up_outside(self) -> bool:
        """Record edits made without memdir (an editor, a git pull) as a version."""
        if not self.recording:
            return False
        self.flush()
        committer = committer_for(self.repo)
        generation = committer.quiet()
        if generation is None:  # a write is under way: its bytes are not an outside edit
            return False
        try:
            return self.repo.record_outside(lambda: committer.still_quiet(generation))
        except (MemdirError, OSError) as exc:
            log.warning("could not record the changes made outside memdir: %s", exc)
            return False

    # -- reading -------------------------------------------------------------------
    def _require(self) -> None:
        if not self.enabled:
            raise ConfigError(
                "history is off (history.enabled = false); turn it on to keep versions"
            )
        if not git_available():
            raise ConfigError(NO_GIT)

    def versions(self, path: str | None = None, limit: int = 20) -> list[Version]:
        """Versions of ``path`` (or of the whole workspace), newest first."""
        self._require()
        self.pick_up_outside()
        spec = self.prefix + str(validate_relative_path(path)) if path else self.prefix
        found = self.repo.versions([spec], limit)
        return [replace(v, paths=self._own(v.paths)) for v in found]

    def _own(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p[len(self.prefix) :] for p in paths if p.startswith(self.prefix))

    def resolve(self, version: str, path: str | None = None) -> str:
        """The full id of ``version``, which must touch this workspace (or ``path``)."""
        self._require()
        self.flush()
        full = self.repo.resolve(version)
        spec = self.prefix + str(validate_relative_path(path)) if path else self.prefix
        touched = self.repo.git(
            "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", full, "--", spec
        )
        if not touched.strip():
            where = repr(path) if path else "this workspace"
            raise NotFoundError(f"no version {version!r} of {where}; list them with the history")
        return full

    def diff(self, version: str, path: str | None = None) -> str:
        """The unified diff ``version`` made (to ``path``, or to this workspace's files)."""
        full = self.resolve(version, path)
        spec = self.prefix + str(validate_relative_path(path)) if path else self.prefix
        return (
            self.repo.diff(full, [spec])
            .replace(f"a/{self.prefix}", "a/")
            .replace(f"b/{self.prefix}", "b/")
        )

    def content_at(self, version: str, path: str) -> bytes | None:
        """The bytes of ``path`` at ``version`` (None: the file did not exist then)."""
        full = self.repo.resolve(version)
        return self.repo.content_at(full, self.prefix + str(validate_relative_path(path)))

    def export_archive(
        self, target: Path, settings: str | None = None, left_out: Sequence[LeftOut] = ()
    ) -> Path:
        """The whole home's history (and ``settings``) as one file (``history.archive``)."""
        self._require()
        self.flush()
        return export_archive(self.repo, target, settings, left_out)

    def import_archive(self, opened: OpenedArchive) -> str:
        """Check an archive (``history.archive.open_archive``) out into this home, which
        has no workspaces yet."""
        self._require()
        return import_archive(self.repo, opened)

    def sync_remote(self, url: str) -> SyncResult:
        """Merge this home's versions with the remote ``url`` and push (``history.sync``)."""
        self._require()
        self.flush()
        return sync_remote(self.repo, url)

    def before(self, version: str) -> str | None:
        """The version before ``version`` (None for the first one)."""
        return self.repo.parent(self.repo.resolve(version))


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
