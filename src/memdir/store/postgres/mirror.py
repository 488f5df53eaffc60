"""Serve the workspace from PostgreSQL: the files table is the truth, the home a cache.

With ``store.workspace_files = "postgres"`` the ``Memory`` facade runs each
operation inside ``WorkspaceMirror.hold``:

* a read pulls the sources it reads (the agent's and the global workspace) into
  the local home, then runs on the local files;
* a write takes a PostgreSQL session advisory lock on its own source (on a
  connection of its own), pulls, runs, pushes what changed and releases the
  lock, so two servers writing one agent's files take turns and no update is
  lost.

``pull`` costs one ``list_files`` query and fetches only the files whose sha256
differs from the local copy; ``push`` uploads only the local Markdown files that
changed since the mirror last agreed with the table, and deletes the rows of
files deleted locally. A pull decides per file from three versions (the table's
row, the local file and the base the mirror last agreed on; ``decide_pull`` in
``cache``): a file changed only in the table is fetched, a file changed only
locally is kept for the next push, and a file changed on both sides takes the
table's version after its local bytes are saved under
``.memdir-mirror/conflicts/``. The base lives inside each workspace folder, so
a thrown-away cache is pulled again in full and never deletes a row. Rows whose
path or source the workspace validators refuse are logged and skipped: nothing
is written outside the workspace. Sessions (``sessions/``), ``index/``,
``memdir.toml`` and non-Markdown files are never touched.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from memdir.errors import InvalidInputError, StoreError
from memdir.store.postgres.cache import (
    STATE_DIR,
    CacheRecord,
    Known,
    decide_pull,
    is_canonical,
    local_sha256,
    markdown_files,
    path_error,
    sha256_of,
    stamp_of,
    workspace_lock,
)
from memdir.store.postgres.connect import Connections, import_driver, lock_key, translate_errors
from memdir.store.postgres.file_table import (
    AGENT_PREFIX,
    GLOBAL_SOURCE,
    FileInfo,
    PostgresFileTable,
    check_path,
    check_source,
)
from memdir.store.postgres.files import AGENTS_DIR, workspace_root, write_file_bytes
from memdir.store.times import from_us
from memdir.workspace import resolve_inside, validate_agent_id
from memdir.workspace.atomic import fsync_directory

log = logging.getLogger(__name__)

Conn = Any  # psycopg.Connection[Any]
LOCK_WAIT_SECONDS = 300.0
"""How long a write waits for another server's write to the same workspace."""
FETCH_BATCH_BYTES = 8 * 1024 * 1024
_IDLE_LOCK_CONNECTIONS = 2


@dataclass
class MirrorReport:
    """What a pull or a push did (paths are ``source:path``)."""

    fetched: int = 0
    bytes_fetched: int = 0
    removed: int = 0
    uploaded: int = 0
    bytes_uploaded: int = 0
    deleted: int = 0
    kept: list[str] = field(default_factory=list)  # local changes waiting for a push
    conflicts: list[str] = field(default_factory=list)  # local copies saved, table's taken
    refused: list[str] = field(default_factory=list)


class _ThreadHolds(threading.local):
    def __init__(self) -> None:
        self.depth = 0
        self.writing: set[str] = set()


class WorkspaceMirror:
    """Keeps the workspaces under ``home`` equal to a ``PostgresFileTable``.

    ``open()`` connects; ``close()`` closes the table and the lock connections.
    Safe to share between threads: each write hold uses a lock connection of its own.
    """

    def __init__(self, table: PostgresFileTable, home: Path) -> None:
        self.table = table
        self.home = Path(home)
        self._db = Connections(table.dsn, table.schema, 1, 10.0)
        self._idle: list[Conn] = []
        self._guard = threading.Lock()
        self._threads = _ThreadHolds()

    @classmethod
    def open(cls, dsn: str, schema: str, home: Path) -> WorkspaceMirror:
        return cls(PostgresFileTable.open(dsn, schema), home)

    def close(self) -> None:
        with self._guard:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        self.table.close()

    def __enter__(self) -> WorkspaceMirror:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- holding -------------------------------------------------------------------------

    @contextmanager
    def hold(
        self, source: str, write: bool = False, pull: Sequence[str] | None = None
    ) -> Iterator[None]:
        """Run a block on fresh local copies of ``pull`` (default: ``source``).

        With ``write``: under the write lock of ``source``, pushing its changes at the
        end (also when the block raises: what it wrote locally is kept, as on a local
        home). Nested holds in one thread pull once; a nested write of a source
        already held runs inside the outer hold.
        """
        sources = [source] if pull is None else list(pull)
        held = self._threads
        if write and source not in held.writing:
            with self._source_lock(check_source(source)):
                held.writing.add(source)
                held.depth += 1
                try:
                    self.pull(sources)
                    try:
                        yield
                    finally:
                        self.push([source])
                finally:
                    held.writing.discard(source)
                    held.depth -= 1
            return
        if held.depth == 0:
            self.pull(sources)
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1

    @contextmanager
    def _source_lock(self, source: str) -> Iterator[None]:
        key = lock_key("memdir-files-source", self.table.schema, source)
        conn = self._lock_connection()
        driver = import_driver()
        try:
            with translate_errors(self.table.location, "workspace lock"):
                try:
                    conn.execute("SELECT pg_advisory_lock(%s)", (key,))
                except driver.errors.LockNotAvailable as exc:
                    raise StoreError(
                        f"waited {LOCK_WAIT_SECONDS:.0f} s for the write lock of {source!r} "
                        f"in {self.table.location}: another memdir server is still writing "
                        "these files; try again"
                    ) from exc
        except BaseException:
            conn.close()
            raise
        try:
            yield
        finally:
            self._release(conn, key)

    def _lock_connection(self) -> Conn:
        with self._guard:
            if self._idle:
                return self._idle.pop()
        conn = self._db.open_raw()
        with translate_errors(self.table.location, "workspace lock"):
            conn.execute(f"SET lock_timeout = {int(LOCK_WAIT_SECONDS * 1000)}")
        return conn

    def _release(self, conn: Conn, key: int) -> None:
        try:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
        except import_driver().Error as exc:
            log.warning("cannot release a workspace write lock (%s); closing its connection", exc)
            conn.close()  # ending the session releases the lock
            return
        with self._guard:
            if len(self._idle) < _IDLE_LOCK_CONNECTIONS:
                self._idle.append(conn)
                return
        conn.close()

    # -- listing -------------------------------------------------------------------------

    def agents(self) -> list[str]:
        """Ids of the agents that have files in the table (one query)."""
        found: list[str] = []
        for source in self.table.list_sources():
            if not source.startswith(AGENT_PREFIX):
                continue
            try:
                found.append(validate_agent_id(source[len(AGENT_PREFIX) :]))
            except InvalidInputError as exc:
                log.warning("ignoring source %r of %s: %s", source, self.table.location, exc)
        return found

    def _cached_sources(self) -> list[str]:
        """The sources this home has pulled before (they hold a mirror record)."""
        found = (
            [GLOBAL_SOURCE]
            if (workspace_root(self.home, GLOBAL_SOURCE) / STATE_DIR).is_dir()
            else []
        )
        agents = self.home / AGENTS_DIR
        for entry in sorted(agents.iterdir()) if agents.is_dir() else []:
            if (entry / STATE_DIR).is_dir():
                try:
                    found.append(AGENT_PREFIX + validate_agent_id(entry.name))
                except InvalidInputError:
                    continue
        return found

    # -- pull ------------------------------------------------------------------------------

    def pull(self, sources: Sequence[str] | None) -> MirrorReport:
        """Make the local copies of ``sources`` (None: every source) equal to the table."""
        report = MirrorReport()
        wanted = None if sources is None else list(dict.fromkeys(sources))
        rows = self.table.list_files(wanted) if wanted != [] else []
        by_source: dict[str, list[FileInfo]] = defaultdict(list)
        for info in rows:
            by_source[info.source].append(info)
        if wanted is None:
            wanted = sorted(set(by_source) | set(self._cached_sources()))
        for source in wanted:
            try:
                check_source(source)
            except InvalidInputError as exc:
                for info in by_source[source]:
                    self._refuse(report, info.source, info.path, exc)
                continue
            self._pull_source(source, by_source[source], report)
        log.debug("pulled %s: %s", wanted, report)
        return report

    def _refuse(self, report: MirrorReport, source: str, path: str, exc: Exception | None) -> None:
        log.warning(
            "refusing workspace file %s %r of %s: %s; delete or rename that row",
            source, path, self.table.location, exc,
        )  # fmt: skip
        report.refused.append(f"{source}:{path}")

    def _target(self, root: Path, source: str, path: str, report: MirrorReport) -> Path | None:
        """Where ``path`` goes under ``root``, or None (refused: bad path, symlink escape)."""
        try:
            return resolve_inside(root, check_path(path))
        except InvalidInputError as exc:
            self._refuse(report, source, path, exc)
            return None

    def _pull_source(self, source: str, rows: list[FileInfo], report: MirrorReport) -> None:
        root = workspace_root(self.home, source)
        if not rows and not (root / STATE_DIR).is_dir():
            return  # nothing in the table, nothing pulled before
        with workspace_lock(root):
            state = CacheRecord(root, self.table.location)
            state.load()
            try:
                self._apply_rows(source, root, rows, state, report)
            finally:
                state.save()

    def _apply_rows(
        self,
        source: str,
        root: Path,
        rows: list[FileInfo],
        state: CacheRecord,
        report: MirrorReport,
    ) -> None:
        fetch: list[tuple[FileInfo, Path, bool]] = []  # row, target, save the local copy first
        seen: set[str] = set()
        folder = str(root)
        for info in rows:
            if not is_canonical(info.path):
                self._refuse(report, source, info.path, path_error(info.path))
                continue
            seen.add(info.path)
            base = state.files.get(info.path)
            try:  # only reads here; whatever is written is checked by resolve_inside first
                local, st = local_sha256(os.path.join(folder, info.path), base)
            except InvalidInputError as exc:
                self._refuse(report, source, info.path, exc)
                continue
            action = decide_pull(info.sha256, None if base is None else base.sha256, local)
            if action == "same" and st is not None:
                state.files[info.path] = Known(info.sha256, stamp_of(st))
            elif action == "keep":
                report.kept.append(f"{source}:{info.path}")
            elif action in ("fetch", "conflict"):
                target = self._target(root, source, info.path, report)
                if target is not None:
                    fetch.append((info, target, action == "conflict"))
        for path in sorted(set(state.files) - seen):
            self._drop_gone(source, root, path, state, report)
        for batch in _batches(fetch):
            self._fetch(source, batch, state, report)

    def _drop_gone(
        self, source: str, root: Path, path: str, state: CacheRecord, report: MirrorReport
    ) -> None:
        """A file pulled or pushed before that the table no longer has."""
        target = self._target(root, source, path, report)
        if target is None:
            return
        known = state.files[path]
        try:
            local, _ = local_sha256(str(target), known)
        except InvalidInputError as exc:
            self._refuse(report, source, path, exc)
            return
        action = decide_pull(None, known.sha256, local)
        if action == "keep":
            report.kept.append(f"{source}:{path}")
            return
        if action == "remove":
            target.unlink()
            fsync_directory(target.parent)
            report.removed += 1
        del state.files[path]

    def _fetch(
        self,
        source: str,
        batch: list[tuple[FileInfo, Path, bool]],
        state: CacheRecord,
        report: MirrorReport,
    ) -> None:
        stored = {
            f.info.path: f for f in self.table.get_many([(source, i.path) for i, _, _ in batch])
        }
        folders: set[Path] = set()
        for info, target, conflict in batch:
            found = stored.get(info.path)
            if found is None:
                continue  # deleted since the listing: the next pull sees it gone
            if conflict:
                self._save_conflict(source, target, info.path, report)
            target.parent.mkdir(parents=True, exist_ok=True)
            resolve_inside(workspace_root(self.home, source), info.path)  # folders made: recheck
            mtime_ns = found.info.updated_us * 1000
            write_file_bytes(target, found.content, mtime_ns, sync_folder=False)
            folders.add(target.parent)
            state.files[info.path] = Known(sha256_of(found.content), stamp_of(target.stat()))
            report.fetched += 1
            report.bytes_fetched += len(found.content)
        for folder in folders:  # the renames are durable before the state records them
            fsync_directory(folder)

    def _save_conflict(self, source: str, target: Path, path: str, report: MirrorReport) -> None:
        """Keep the local bytes of a file changed both locally and in the table."""
        when = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        copy = workspace_root(self.home, source) / STATE_DIR / "conflicts" / f"{path}.{when}"
        copy.parent.mkdir(parents=True, exist_ok=True)
        write_file_bytes(copy, target.read_bytes(), target.stat().st_mtime_ns)
        log.warning(
            "%s %r changed both here and in %s; the table's version wins, the local one is "
            "saved as %s",
            source, path, self.table.location, copy,
        )  # fmt: skip
        report.conflicts.append(f"{source}:{path}")

    # -- push ------------------------------------------------------------------------------

    def push(self, sources: Sequence[str]) -> MirrorReport:
        """Upload the local changes of ``sources``: changed files, and deletions."""
        report = MirrorReport()
        for source in dict.fromkeys(sources):
            root = workspace_root(self.home, source)
            if not root.is_dir():
                continue
            with workspace_lock(root):
                state = CacheRecord(root, self.table.location)
                state.load()
                try:
                    self._push_source(source, root, state, report)
                finally:
                    state.save()
        log.debug("pushed %s: %s", list(sources), report)
        return report

    def _push_source(
        self, source: str, root: Path, state: CacheRecord, report: MirrorReport
    ) -> None:
        local: dict[str, Path] = {}
        for relpath, file in markdown_files(root).items():
            if is_canonical(relpath):
                local[relpath] = file
                continue
            error = path_error(relpath)
            log.warning("not storing %s %r in the table: %s", source, relpath, error)
            report.refused.append(f"{source}:{relpath}")
        for path, file in local.items():
            self._push_file(source, path, file, state, report)
        for path in sorted(set(state.files) - set(local)):
            target = self._target(root, source, path, report)
            if target is None or target.exists():
                continue  # refused, or present but not listed (hidden): leave the row
            self.table.delete(source, path)
            del state.files[path]
            report.deleted += 1

    def _push_file(
        self, source: str, path: str, file: Path, state: CacheRecord, report: MirrorReport
    ) -> None:
        st = file.stat()
        known = state.files.get(path)
        if known is not None and known.stamp == stamp_of(st):
            return
        data = file.read_bytes()
        sha = sha256_of(data)
        if known is None or known.sha256 != sha:
            self.table.put(source, path, data, updated_at=from_us(st.st_mtime_ns // 1000))
            report.uploaded += 1
            report.bytes_uploaded += len(data)
        state.files[path] = Known(sha, stamp_of(st))


def _batches(
    fetch: list[tuple[FileInfo, Path, bool]],
) -> Iterator[list[tuple[FileInfo, Path, bool]]]:
    """Split fetches into queries of about ``FETCH_BATCH_BYTES`` each."""
    batch: list[tuple[FileInfo, Path, bool]] = []
    size = 0
    for item in fetch:
        if batch and size + item[0].size > FETCH_BATCH_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += item[0].size
    if batch:
        yield batch


# -- the facade's decorator ------------------------------------------------------------------


class HoldsFiles(Protocol):
    def _hold_files(self, write: bool) -> AbstractContextManager[object]: ...


S = TypeVar("S", bound=HoldsFiles)
P = ParamSpec("P")
R = TypeVar("R")


def mirrored(
    write: bool,
) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    """Run a facade method inside ``self._hold_files(write)`` (a no-op for local files)."""

    def wrap(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(method)
        def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            with self._hold_files(write):
                return method(self, *args, **kwargs)

        return run

    return wrap
