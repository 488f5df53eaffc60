"""Move a home's workspace files between plain folders and PostgreSQL: import and export.

``import_from_directory(table, home)`` copies every Markdown file of
``<home>/workspace`` (source ``global``) and ``<home>/agents/<id>`` (source
``agent:<id>``) into the ``PostgresFileTable``; ``export_to_directory(table,
home)`` writes every row back to the same places. The round trip is exact:
bytes, paths, every agent and the global workspace. Only workspace Markdown
travels: ``memdir.toml``, ``sessions/`` and ``index/`` stay where they are,
and hidden entries (names starting with '.') are skipped, as discovery does.

Rules, per file (each file is written atomically on its own):

* same content on both sides: ``unchanged`` (nothing is written);
* the target is newer (its mtime, or the row's ``updated_at``) and differs:
  ``kept``, unless ``force``; a newer file is never overwritten silently;
* otherwise ``created`` or ``updated``; exported files get the row's
  ``updated_at`` as their mtime, imported rows the file's mtime, so a second
  transfer in either direction finds everything unchanged;
* a row or folder whose path or agent id the workspace validators refuse
  (``..``, absolute, not ``.md``, a symlink leading out of the workspace...)
  is ``refused`` and nothing is written for it; an I/O error is ``failed``.

Nothing is deleted on either side. ``dry_run`` reports the same actions
without writing anything. Per-file errors are collected in the report (a
documented per-item boundary); only a lost database connection stops the run.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from memdir.errors import InvalidInputError, MemdirError
from memdir.home import AGENT_PREFIX, GLOBAL_SOURCE, Home
from memdir.progress import Progress, ProgressUpdate
from memdir.store.postgres.file_table import (
    DEFAULT_SCHEMA,
    FileInfo,
    PostgresFileTable,
    StoredFile,
    check_path,
    check_source,
    decide_put,
)
from memdir.store.times import from_us
from memdir.workspace import list_markdown, resolve_inside, validate_agent_id
from memdir.workspace.atomic import fsync_directory

logger = logging.getLogger(__name__)

Action = Literal["created", "updated", "unchanged", "kept", "refused", "failed"]
ACTIONS: tuple[Action, ...] = ("created", "updated", "unchanged", "kept", "refused", "failed")

__all__ = [
    "DEFAULT_SCHEMA",
    "FileInfo",
    "PostgresFileTable",
    "StoredFile",
    "TransferItem",
    "TransferReport",
    "export_to_directory",
    "import_from_directory",
    "workspace_root",
]


@dataclass(frozen=True)
class TransferItem:
    """What happened to one file (``path`` is empty for a whole refused folder)."""

    source: str
    path: str
    action: Action
    detail: str = ""


@dataclass
class TransferReport:
    """Every file an import or export looked at, and what it did with each."""

    direction: Literal["import", "export"]
    dry_run: bool = False
    items: list[TransferItem] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        found = Counter(item.action for item in self.items)
        return {action: found[action] for action in ACTIONS}

    @property
    def ok(self) -> bool:
        """True when nothing was refused and nothing failed."""
        counts = self.counts
        return counts["refused"] == 0 and counts["failed"] == 0

    def summary(self) -> str:
        verb = {"import": "imported into the database", "export": "exported to the home"}
        counts = self.counts
        parts = ", ".join(f"{counts[a]} {a}" for a in ACTIONS)
        head = "dry run, nothing written: " if self.dry_run else ""
        text = f"{head}{len(self.items)} files {verb[self.direction]}: {parts}"
        if counts["kept"]:
            text += " (kept files are newer on the other side; --force overwrites them)"
        return text


def workspace_root(home: Path, source: str) -> Path:
    """The folder of ``source`` under ``home`` (``InvalidInputError`` for a bad source)."""
    return Home(home).source_root(check_source(source))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_file_bytes(path: Path, data: bytes, mtime_ns: int, *, sync_folder: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically and give it ``mtime_ns``.

    The temp file is hidden and never ends in ``.md`` (discovery skips it); an
    existing file keeps its permission bits. Without ``sync_folder`` the caller
    fsyncs the folder (once for many files).
    """
    temp = path.parent / f".memdir-export.{secrets.token_hex(6)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.utime(temp, ns=(mtime_ns, mtime_ns))
        if path.exists():
            os.chmod(temp, stat.S_IMODE(path.stat().st_mode))
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    if sync_folder:
        fsync_directory(path.parent)


# -- export: database -> home --------------------------------------------------------------


def _export_target(home: Path, info: FileInfo) -> Path:
    """Where a row goes; refuses bad sources, bad or non-canonical paths, symlink escapes."""
    root = workspace_root(home, info.source)
    return resolve_inside(root, check_path(info.path))


def _export_action(target: Path, info: FileInfo, force: bool) -> Action:
    if not target.exists() and not target.is_symlink():
        return "created"
    if not target.is_file():
        raise InvalidInputError(f"{str(target)!r} exists and is not a regular file")
    local = target.stat()
    if local.st_size == info.size and _sha(target.read_bytes()) == info.sha256:
        return "unchanged"
    if not force and local.st_mtime_ns // 1000 > info.updated_us:
        return "kept"
    return "updated"


def _export_one(
    table: PostgresFileTable, home: Path, info: FileInfo, force: bool, dry_run: bool
) -> TransferItem:
    try:
        target = _export_target(home, info)
    except InvalidInputError as exc:
        logger.warning("refusing to export %s %r: %s", info.source, info.path, exc)
        return TransferItem(info.source, info.path, "refused", str(exc))
    try:
        action = _export_action(target, info, force)
        if dry_run or action not in ("created", "updated"):
            return TransferItem(info.source, info.path, action)
        stored = table.get(info.source, info.path)
        if stored is None:  # deleted by someone else since the listing
            return TransferItem(info.source, info.path, "unchanged", "gone from the database")
        target.parent.mkdir(parents=True, exist_ok=True)
        resolve_inside(workspace_root(home, info.source), info.path)  # folders made: recheck
        write_file_bytes(target, stored.content, stored.info.updated_us * 1000)
    except (MemdirError, OSError) as exc:  # per-file boundary: reported, the rest goes on
        logger.warning("cannot export %s %r: %s", info.source, info.path, exc)
        refused = isinstance(exc, InvalidInputError)
        return TransferItem(info.source, info.path, "refused" if refused else "failed", str(exc))
    return TransferItem(info.source, info.path, action)


def export_to_directory(
    table: PostgresFileTable,
    home: Path | str,
    *,
    force: bool = False,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> TransferReport:
    """Write every file of ``table`` into ``home`` (see the module docstring for the rules)."""
    report = TransferReport("export", dry_run)
    listed = table.list_files()
    for done, info in enumerate(listed, start=1):
        report.items.append(_export_one(table, Path(home), info, force, dry_run))
        if progress is not None:
            progress(ProgressUpdate("exporting", done, len(listed), "files", info.path))
    logger.info("export: %s", report.summary())
    return report


# -- import: home -> database --------------------------------------------------------------


def local_workspaces(home: Path, report: TransferReport) -> list[tuple[str, Path]]:
    """(source, folder) of the global workspace and every agent folder under ``home``.

    Agent folders whose names are not valid agent ids are reported as refused.
    """
    found: list[tuple[str, Path]] = []
    layout = Home(home)
    if layout.global_root.is_dir():
        found.append((GLOBAL_SOURCE, layout.global_root))
    agents = layout.agents_dir
    entries = sorted(agents.iterdir(), key=lambda p: p.name) if agents.is_dir() else []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        try:
            found.append((AGENT_PREFIX + validate_agent_id(entry.name), entry))
        except InvalidInputError as exc:
            logger.warning("refusing to import agent folder %r: %s", entry.name, exc)
            report.items.append(TransferItem(AGENT_PREFIX + entry.name, "", "refused", str(exc)))
    return found


def _import_one(
    table: PostgresFileTable,
    source: str,
    relpath: str,
    path: Path,
    known: dict[tuple[str, str], FileInfo],
    force: bool,
    dry_run: bool,
) -> TransferItem:
    try:
        check_path(relpath)
    except InvalidInputError as exc:
        logger.warning("refusing to import %s %r: %s", source, relpath, exc)
        return TransferItem(source, relpath, "refused", str(exc))
    try:
        mtime_us = path.stat().st_mtime_ns // 1000
        data = path.read_bytes()
        if dry_run:
            action: Action = decide_put(
                known.get((source, relpath)), _sha(data), mtime_us, not force
            )
        else:
            action = table.put(
                source, relpath, data, updated_at=from_us(mtime_us), keep_newer=not force
            )
    except (MemdirError, OSError) as exc:  # per-file boundary: reported, the rest goes on
        logger.warning("cannot import %s %r: %s", source, relpath, exc)
        return TransferItem(source, relpath, "failed", str(exc))
    return TransferItem(source, relpath, action)


def import_from_directory(
    table: PostgresFileTable,
    home: Path | str,
    *,
    force: bool = False,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> TransferReport:
    """Copy every workspace Markdown file of ``home`` into ``table`` (module docstring rules)."""
    report = TransferReport("import", dry_run)
    known = {(i.source, i.path): i for i in table.list_files()} if dry_run else {}
    found = [
        (source, item)
        for source, root in local_workspaces(Path(home), report)
        for item in list_markdown(root)
    ]
    for done, (source, local) in enumerate(found, start=1):
        item = _import_one(table, source, local.relpath, local.path, known, force, dry_run)
        report.items.append(item)
        if progress is not None:
            progress(ProgressUpdate("importing", done, len(found), "files", local.relpath))
    logger.info("import: %s", report.summary())
    return report
