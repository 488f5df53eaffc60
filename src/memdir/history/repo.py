"""A home's history: one git repository at the home's root, one commit per change.

The repository versions the workspaces (``workspace/`` and ``agents/<id>/``) and nothing
else: the index, the facts database, sessions, the configuration (which may name
credentials), locks and caches stay out through the ``.gitignore`` memdir writes. Every
commit carries its attribution as trailers (``Agent:``, ``Token:``, ``Session:``,
``Tool:``, ``Reason:``), so ``git log`` shows the same history memdir does, and the
user can push the repository anywhere.

memdir drives the ``git`` command rather than a library: ``git add`` and ``git commit``
of one file cost 27.5/33.9 ms (p50/p95) against dulwich's 41.0/53.0 ms on the same
200-file workspace (``benchmarks/history_backends.py``), and the repository is then
exactly what the user's own git sees.

Commits of one home are serialized by a lock file (``index/history.lock``), so processes
saving at once never meet on git's ``index.lock``; a git the user runs by hand in the
home may still hold it, and a commit then waits and retries.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from memdir.errors import DependencyError, InvalidInputError, NotFoundError, StoreError
from memdir.history.attribution import Attribution
from memdir.history.conflicts import finish_interrupted_merge
from memdir.workspace.locking import lock_file

log = logging.getLogger(__name__)

GITIGNORE = """\
# Written by memdir: only the workspaces are versioned (docs/history.md).
/*
!/.gitignore
!/.gitattributes
!/workspace/
!/agents/
.history/
.*.lock
*.append
"""
GITATTRIBUTES = """\
# Written by memdir: notes merge line by line, keeping both sides (docs/history.md).
**/memory/*.md merge=union
"""
LOCK_FILE = "index/history.lock"
TRAILERS = ("Agent", "Token", "Session", "Tool", "Reason")
VERSION_ID = re.compile(r"[0-9a-f]{7,40}")
GIT_TIMEOUT_S = 120.0
INDEX_LOCK_RETRIES = 50
NO_GIT = (
    "history needs git, which is not installed: install git (for example `apt install git`) "
    "or turn history off with history.enabled = false"
)
HELD = "held by the version before"
_RECORD = "\x1e"
_FIELD = "\x1f"
_END = "\x1d"


@dataclass(frozen=True)
class Version:
    """One change of the workspace files: a commit with its attribution."""

    id: str
    time: datetime
    paths: tuple[str, ...]  # home-relative, as the repository names them
    agent: str | None
    token: str | None
    session: str | None
    tool: str | None
    reason: str | None
    subject: str


def git_available() -> bool:
    return shutil.which("git") is not None


class HomeHistory:
    """The git repository of the home at ``root`` (created on the first change)."""

    _held = threading.local()  # how deep this thread holds the lock, per home

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def started(self) -> bool:
        return (self.root / ".git").exists()

    # -- git ----------------------------------------------------------------------
    def run(self, *args: str, author: str | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run ``git args`` in the home, as memdir configures it, whatever it returns."""
        if not git_available():
            raise DependencyError(NO_GIT)
        name = author or "memdir"
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update(
            GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL="memdir@localhost",
            GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL="memdir@localhost",
            GIT_TERMINAL_PROMPT="0", LC_ALL="C",
        )  # fmt: skip
        command = [
            "git", "-C", str(self.root), "-c", "core.autocrlf=false", "-c", "core.quotePath=false",
            "-c", "commit.gpgsign=false", "-c", "core.hooksPath=", *args,
        ]  # fmt: skip
        return subprocess.run(command, capture_output=True, env=env, timeout=GIT_TIMEOUT_S)

    def git(self, *args: str, check: bool = True, author: str | None = None) -> str:
        """Run ``git args`` in the home; its standard output. ``StoreError`` on failure."""
        for attempt in range(INDEX_LOCK_RETRIES):
            done = self.run(*args, author=author)
            if done.returncode == 0 or not check:
                return done.stdout.decode("utf-8", "replace")
            error = done.stderr.decode("utf-8", "replace").strip()
            if "index.lock" in error and attempt + 1 < INDEX_LOCK_RETRIES:
                time.sleep(0.1)  # a git run by hand holds the index: wait for it
                continue
            raise StoreError(f"git {args[0]} failed in {self.root}: {error or done.returncode}")
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the home's history lock (reentrant within a thread)."""
        depth: dict[Path, int] = getattr(self._held, "depth", None) or {}
        self._held.depth = depth
        if depth.get(self.root, 0):
            depth[self.root] += 1
            try:
                yield
            finally:
                depth[self.root] -= 1
            return
        path = self.root / LOCK_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        with lock_file(path, create=True):
            depth[self.root] = 1
            try:
                yield
            finally:
                depth[self.root] = 0

    def start(self) -> None:
        """Create the repository with the workspaces as they are (once; under the lock)."""
        if self.started:
            return
        self.root.mkdir(parents=True, exist_ok=True)  # a first write creates the home too
        self.git("init", "-q")
        for name, text in ((".gitignore", GITIGNORE), (".gitattributes", GITATTRIBUTES)):
            if not (self.root / name).exists():
                (self.root / name).write_text(text, encoding="utf-8")
        self.git("add", "-A", "--", ".")
        self._commit(
            Attribution(tool="history", reason="history begins: the workspaces as they were"),
            "memdir: history begins",
        )

    # -- recording ----------------------------------------------------------------
    def record(self, paths: Sequence[str], attribution: Attribution) -> bool:
        """Commit the home-relative ``paths`` (files or folders, new files included) as they
        are now; False when nothing changed."""
        wanted = [p for p in paths if not _unversioned(p)]
        if not wanted:
            return False
        with self.locked():
            self.start()
            self._settle()
            self.git("add", "-A", "--ignore-errors", "--", *wanted, check=False)
            return self._commit(attribution, _subject(attribution, wanted))

    def record_snapshot(
        self, contents: Mapping[str, bytes | None], attribution: Attribution, appended: bool
    ) -> bool:
        """Commit home-relative paths with the bytes a write left (None: deleted).

        The bytes were read right after the write, so the version holds that write exactly
        even when the commit runs later. For an append (``appended``), a note another
        process appended to since, whose version is already in, is not taken back: if the
        last version's text begins with these bytes, this write is recorded as held by it
        (an empty commit).
        """
        paths = [p for p in contents if not _unversioned(p)]
        if not paths:
            return False
        subject = _subject(attribution, paths)
        with self.locked():
            self.start()
            self._settle()
            staged = False
            for path in paths:
                content = contents[path]
                if content is None:
                    if self.git("ls-files", "--", path).strip():
                        self.git("update-index", "--force-remove", "--", path)
                        staged = True
                    continue
                if appended:
                    head = self.run("cat-file", "blob", f"HEAD:{path}")
                    if head.returncode == 0 and head.stdout.startswith(content):
                        continue  # a later append is in already: do not take it back
                blob = self._run_input(content, "hash-object", "-w", "--stdin").strip()
                self.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
                staged = True
            empty = not staged or self.run("diff", "--cached", "--quiet").returncode == 0
            if empty:
                subject += f" ({HELD})"
            self.git(
                "commit", "-q", "--no-verify", *(["--allow-empty"] if empty else []),
                "-m", _message(subject, attribution), author=attribution.agent,
            )  # fmt: skip
            return True

    def _run_input(self, data: bytes, *args: str) -> str:
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        done = subprocess.run(
            ["git", "-C", str(self.root), *args], input=data, capture_output=True, env=env,
            timeout=GIT_TIMEOUT_S, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise StoreError(f"git {args[0]} failed in {self.root}: {done.stderr!r}")
        return done.stdout.decode("ascii")

    def record_outside(self, still_quiet: Callable[[], bool] | None = None) -> bool:
        """Commit what changed in the workspaces without memdir (an editor, a git pull).

        ``still_quiet``, asked once the changes are staged, says no write of this process
        began meanwhile; when it says one did, nothing is recorded (False)."""
        with self.locked():
            self.start()
            self._settle()
            roots = [name for name in ("workspace", "agents") if (self.root / name).exists()]
            if not roots:
                return False
            self.git("add", "-A", "--", *roots)
            if still_quiet is not None and not still_quiet():
                self.git("reset", "-q", "--", *roots, check=False)
                return False
            reason = "changed outside memdir (an editor, a copy, a git pull)"
            return self._commit(Attribution(tool="outside", reason=reason), "outside: " + reason)

    def _settle(self) -> None:
        """Finish a sync's merge that a kill interrupted, before anything else is recorded
        (``history.conflicts.finish_interrupted_merge``); under the lock."""
        if (self.root / ".git" / "MERGE_HEAD").exists():
            kept = finish_interrupted_merge(self)
            log.warning(
                "finished the merge of an interrupted sync in %s (kept %s)", self.root, kept
            )

    def _commit(self, attribution: Attribution, subject: str) -> bool:
        if self.run("diff", "--cached", "--quiet").returncode == 0:
            return False  # nothing staged: the files are as the last version has them
        self.git(
            "commit", "-q", "--no-verify", "-m", _message(subject, attribution),
            author=attribution.agent,
        )  # fmt: skip
        return True

    # -- reading ------------------------------------------------------------------
    def versions(self, pathspecs: Sequence[str], limit: int = 50) -> list[Version]:
        """The versions touching ``pathspecs`` (home-relative), newest first, with the writes
        recorded as held by the version before (empty commits, which name their files only
        in their subject)."""
        if not self.started:
            return []
        fmt = f"--format={_RECORD}%H{_FIELD}%aI{_FIELD}%B{_END}"
        changed = self.git(
            "log", f"-n{int(limit)}", "--no-renames", "--name-only", "--diff-merges=first-parent",
            fmt, "--", *pathspecs,
        )  # fmt: skip
        held = self.git("log", f"-n{int(limit)}", "--fixed-strings", f"--grep={HELD}", fmt)
        found = [_parse(record) for record in changed.split(_RECORD) if record.strip()]
        for record in held.split(_RECORD):
            if record.strip():
                version = _parse(record)
                named = _held_paths(version.subject)
                if any(_within(path, spec) for path in named for spec in pathspecs):
                    found.append(replace(version, paths=named))
        found.sort(key=lambda v: v.time, reverse=True)  # stable: git's order within a second
        return found[:limit]

    def resolve(self, version: str) -> str:
        """The full id of ``version`` (7-40 hex digits); ``NotFoundError`` if unknown."""
        if not isinstance(version, str) or VERSION_ID.fullmatch(version) is None:
            raise InvalidInputError(
                f"invalid version id {version!r}: give 7-40 hex digits as the history lists them"
            )
        if self.started:
            found = self.git("rev-parse", "-q", "--verify", f"{version}^{{commit}}", check=False)
            if found.strip():
                return found.strip()
        raise NotFoundError(f"no version {version!r} in the history; list them with the history")

    def parent(self, version: str) -> str | None:
        found = self.git("rev-parse", "-q", "--verify", f"{version}^", check=False).strip()
        return found or None

    def content_at(self, version: str, path: str) -> bytes | None:
        """The bytes of home-relative ``path`` at ``version`` (None: it did not exist)."""
        if not self.git("ls-tree", "--name-only", version, "--", path).strip():
            return None
        done = self.run("cat-file", "blob", f"{version}:{path}")
        if done.returncode != 0:
            raise StoreError(f"git cat-file failed in {self.root}: {done.stderr!r}")
        return done.stdout

    def diff(self, version: str, pathspecs: Sequence[str]) -> str:
        """The unified diff ``version`` made to ``pathspecs`` (against its parent)."""
        return self.git(
            "show", "--format=", "--no-color", "--no-renames", version, "--", *pathspecs
        )


def _values(attribution: Attribution) -> tuple[str | None, ...]:
    a = attribution
    return (a.agent, a.token, a.session, a.tool, a.reason)


def _message(subject: str, attribution: Attribution) -> str:
    trailers = zip(TRAILERS, _values(attribution), strict=True)
    return subject + "\n\n" + "\n".join(f"{name}: {value}" for name, value in trailers if value)


def _subject(attribution: Attribution, paths: Sequence[str]) -> str:
    what = attribution.tool or "memdir"
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return f"{what}: {shown}"


def _held_paths(subject: str) -> tuple[str, ...]:
    """The paths a held write's subject names: ``<tool>: <a>, <b> (held by ...)``."""
    listed = subject.partition(": ")[2].removesuffix(f" ({HELD})")
    listed = re.sub(r" and \d+ more$", "", listed)
    return tuple(p for p in listed.split(", ") if p)


def _within(path: str, spec: str) -> bool:
    return path == spec or path.startswith(spec.rstrip("/") + "/")


def _unversioned(path: str) -> bool:
    return "/.history/" in f"/{path}" or path.endswith(".lock")


def _parse(record: str) -> Version:
    header, _, names = record.partition(_END)
    commit, when, message = header.split(_FIELD, 2)
    lines = message.strip().splitlines()
    trailers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(": ")
        if sep and name in TRAILERS:
            trailers[name] = value.strip()
    return Version(
        id=commit.strip(),
        time=datetime.fromisoformat(when.strip()),
        paths=tuple(p for p in names.strip().splitlines() if p.strip()),
        agent=trailers.get("Agent"), token=trailers.get("Token"),
        session=trailers.get("Session"), tool=trailers.get("Tool"),
        reason=trailers.get("Reason"), subject=lines[0] if lines else "",
    )  # fmt: skip
