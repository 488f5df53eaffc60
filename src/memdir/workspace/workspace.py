"""The ``Workspace``: one folder of Markdown memory and the file tools over it.

``Workspace(home)`` is the global workspace ``<home>/workspace``;
``Workspace(home, "coder")`` is the agent workspace ``<home>/agents/coder``.
Every path argument is workspace-relative and checked (see ``paths``). Reads of
an agent workspace fall back to the global file for bootstrap names the agent
does not have; writes always go to the agent's own workspace.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memdir.errors import (
    InvalidInputError,
    InvalidPathError,
    NextStep,
    NotFoundError,
)
from memdir.home import Home, validate_agent_id
from memdir.workspace import ritual, seeding
from memdir.workspace.atomic import (
    MAX_FILE_BYTES,
    check_size,
    fsync_directory,
    read_markdown,
    write_atomic,
)
from memdir.workspace.bootstrap import (
    FALLBACK_FILES,
    GLOBAL_ONLY_FILES,
    PROMPT_FILES,
    BootstrapFile,
    load_bootstrap_file,
    load_prompt_file,
)
from memdir.workspace.daily import DAILY_NOTE_NAME, MEMORY_DIR, NoteLocation, append_daily
from memdir.workspace.discovery import MemoryFile, discover_memory_files, list_markdown
from memdir.workspace.edits import replaced
from memdir.workspace.locking import lock_file
from memdir.workspace.paths import (
    resolve_inside,
    validate_prefix,
    validate_relative_path,
)
from memdir.workspace.prompt_files import PromptFile, load_prompt_files, set_prompt_file
from memdir.workspace.skills import SKILL_PATH, Skill, discover_skills

logger = logging.getLogger(__name__)

ContentCheck = Callable[[str, str, str], None]
"""``check(relative path, text before, text after)``: raise to refuse a write or an edit."""


SEE_FILES = NextStep("see which files exist with {}", "list_files")


@dataclass(frozen=True)
class FileSlice:
    """A line range of a file, as returned by ``Workspace.get``.

    ``start_line``/``end_line`` are 1-based and inclusive (``end_line`` is
    ``start_line - 1`` when the range is empty); ``content`` holds the raw lines
    and ``text`` the same lines prefixed with their numbers.
    """

    path: str
    start_line: int
    end_line: int
    total_lines: int
    content: str
    text: str


@dataclass(frozen=True)
class FileInfo:
    """A workspace file's size in bytes and the time it last changed (UTC)."""

    path: str
    bytes: int
    updated_at: dt.datetime


def _check_line_arguments(from_line: int | None, lines: int | None) -> None:
    for label, value in (("from_line", from_line), ("lines", lines)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InvalidInputError(f"{label} must be a whole number, got {value!r}")
        if value is not None and value < 1:
            raise InvalidInputError(f"{label} must be 1 or more, got {value}")


class Workspace:
    """The global workspace (``agent_id=None``) or one agent's workspace under ``home``."""

    def __init__(self, home: Path, agent_id: str | None = None) -> None:
        self.home = Path(home)
        layout = Home(self.home)
        self.agent_id = None if agent_id is None else validate_agent_id(agent_id)
        self.global_root = layout.global_root
        self.root = layout.workspace_root(self.agent_id)

    def __repr__(self) -> str:
        return f"Workspace(home={str(self.home)!r}, agent_id={self.agent_id!r})"

    @property
    def memory_dir(self) -> Path:
        """The ``memory/`` folder of this workspace (daily and session notes)."""
        return self.root / MEMORY_DIR

    # -- seeding and bootstrap files ---------------------------------------------

    def seed(self, name: str | None = None, description: str = "") -> list[str]:
        """Create the missing template files; return their relative paths.

        The global workspace gets the global templates (and BOOTSTRAP.md when
        brand-new); an agent workspace gets its personalised SOUL.md (``name``
        defaults to the agent id), TOOLS.md, an empty MEMORY.md and ``memory/``.
        """
        if self.agent_id is None:
            return seeding.seed_global(self.root)
        return seeding.seed_agent(self.root, name or self.agent_id, description)

    def load_bootstrap(self, name: str) -> BootstrapFile:
        """Load one bootstrap file: the agent's copy first, then the global one."""
        agent_root = None if self.agent_id is None else self.root
        return load_bootstrap_file(self.global_root, agent_root, name)

    def load_bootstrap_files(self, names: Sequence[str] = PROMPT_FILES) -> list[BootstrapFile]:
        """Load bootstrap files in the given order (default: the system prompt order)."""
        return [self.load_bootstrap(name) for name in names]

    @property
    def _agent_root(self) -> Path | None:
        return None if self.agent_id is None else self.root

    def prompt_files(self) -> list[PromptFile]:
        """The files the system prompt may carry, in order, per ``prompt.toml`` (see there)."""
        return load_prompt_files(self.global_root, self._agent_root)

    def set_prompt_file(
        self, path: str, *, enabled: bool | None = None, sort_order: int | None = None
    ) -> PromptFile:
        """Switch ``path`` into or out of the prompt and/or move it; returns its new setting.

        Written to this workspace's ``prompt.toml`` (an agent's own over the global one).
        """
        set_prompt_file(self.root, path, enabled=enabled, sort_order=sort_order)
        relative = str(validate_relative_path(path))
        return next(f for f in self.prompt_files() if f.path == relative)

    def load_prompt_file(self, path: str) -> BootstrapFile:
        """A prompt file as ``memory_read_file`` would read it (None content: missing)."""
        return load_prompt_file(self.global_root, self._agent_root, path)

    def skills(self) -> list[Skill]:
        """The skills (``skills/<name>/SKILL.md``) of this workspace and the global one."""
        return discover_skills(self.global_root, self._agent_root)

    # -- the first-run ritual ---------------------------------------------------------

    @property
    def ritual_active(self) -> bool:
        """Whether this workspace's own BOOTSTRAP.md (the first-run ritual) exists."""
        return ritual.ritual_active(self.root)

    def finish_ritual(self) -> bool:
        """Delete this workspace's BOOTSTRAP.md; True if there was one."""
        return ritual.finish_ritual(self.root)

    def finish_ritual_if_done(self) -> bool:
        """Finish the ritual once its files differ from their templates; True if it did now."""
        if not self.ritual_active or not ritual.ritual_files_done(
            self.root, self.agent_id is not None
        ):
            return False
        return self.finish_ritual()

    # -- memory files ----------------------------------------------------------------

    def append_daily(self, text: str, date: dt.date | None = None) -> NoteLocation:
        """Append ``text`` to ``memory/YYYY-MM-DD.md`` under an OS lock; return where it landed."""
        return append_daily(self.root, text, date)

    def discover_memory_files(self, extra: Sequence[str] = ()) -> list[MemoryFile]:
        """MEMORY.md (or memory.md), ``memory/**``, ``learnings/**`` and ``extra``, sorted."""
        return discover_memory_files(self.root, extra)

    def list_daily_notes(self) -> list[MemoryFile]:
        """The ``memory/**/YYYY-MM-DD.md`` daily notes of this workspace, sorted."""
        notes = list_markdown(self.root, MEMORY_DIR)
        return [note for note in notes if DAILY_NOTE_NAME.fullmatch(note.path.name)]

    # -- file tools ------------------------------------------------------------------

    def resolve(self, path: str) -> Path:
        """Check ``path`` and return its absolute location in this workspace."""
        return resolve_inside(self.root, validate_relative_path(path))

    def _fallback(self, relative: PurePosixPath) -> Path | None:
        shared = str(relative) in FALLBACK_FILES or SKILL_PATH.fullmatch(str(relative))
        if self.agent_id is None or not shared:
            return None
        candidate = resolve_inside(self.global_root, relative)
        return candidate if candidate.is_file() else None

    def _home_of(self, relative: PurePosixPath) -> Path:
        """The root a path lives in: the global one for USER.md (one human for every
        agent: read, write, edit and the prompt all use the global file), else this one."""
        if self.agent_id is not None and str(relative) in GLOBAL_ONLY_FILES:
            return self.global_root
        return self.root

    def _locate_for_read(self, path: str) -> tuple[str, Path]:
        relative = validate_relative_path(path)
        own = resolve_inside(self._home_of(relative), relative)
        if own.is_dir():
            raise InvalidPathError(f"{path!r} is a folder, not a file; pass a '.md' file path")
        if own.is_file():
            return str(relative), own
        fallback = self._fallback(relative)
        if fallback is not None:
            return str(relative), fallback
        raise NotFoundError(
            f"{str(relative)!r} does not exist in the workspace", next_step=SEE_FILES
        )

    def file_info(self, path: str) -> FileInfo:
        """Size and last change of a file as ``read_file`` would find it."""
        relative, located = self._locate_for_read(path)
        stat = located.stat()
        changed = dt.datetime.fromtimestamp(stat.st_mtime, tz=dt.UTC)
        return FileInfo(relative, stat.st_size, changed)

    def has_file(self, path: str) -> bool:
        """Whether a read of ``path`` finds a file (its own, or a global one by fallback)."""
        try:
            self._locate_for_read(path)
        except NotFoundError:
            return False
        return True

    def read_file(self, path: str) -> str:
        """Return the whole text of a workspace file (at most ``MAX_READ_BYTES``)."""
        relative, located = self._locate_for_read(path)
        size = located.stat().st_size
        if size > MAX_READ_BYTES:
            raise InvalidInputError(
                f"{relative!r} is {size:,} bytes, over the limit of {MAX_READ_BYTES:,} bytes for "
                f"reading a whole file; {_READ_IN_PARTS}"
            )
        return read_markdown(located)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> FileSlice:
        """Return ``lines`` lines from ``from_line`` (default: the whole file), numbered.

        The lines returned may hold at most ``MAX_READ_BYTES``; the file is read
        line by line, so a large file costs one pass, not its size in memory.
        """
        _check_line_arguments(from_line, lines)
        relative, located = self._locate_for_read(path)
        start = from_line or 1
        chosen, total = _read_lines(relative, located, start, lines)
        if start > max(total, 1):
            raise InvalidInputError(
                f"from_line {start} is past the end of {relative!r}, which has "
                f"{total} lines; ask for from_line {max(total, 1)} or less"
            )
        end = start + len(chosen) - 1
        width = len(str(max(end, 1)))
        numbered = "\n".join(f"{start + i:>{width}}\t{line}" for i, line in enumerate(chosen))
        return FileSlice(relative, start, end, total, "\n".join(chosen), numbered)

    def list_files(self, prefix: str = "") -> list[str]:
        """Relative paths of all ``.md`` files that start with ``prefix``, sorted.

        An agent workspace also lists the global bootstrap files it reads by fallback.
        """
        wanted = validate_prefix(prefix)
        names = {item.relpath for item in list_markdown(self.root)}
        if self.agent_id is not None:
            names.update(name for name in FALLBACK_FILES if (self.global_root / name).is_file())
        return sorted(name for name in names if name.startswith(wanted))

    def modified_files(self, since: float) -> list[tuple[str, float, int]]:
        """``(path, mtime, size)`` of the files ``list_files`` lists that changed at or after
        ``since`` (a POSIX time), newest first; files that vanish meanwhile are left out."""
        found = [(item.relpath, item.path) for item in list_markdown(self.root)]
        if self.agent_id is not None:
            own = {relpath for relpath, _ in found}
            found.extend(
                (name, self.global_root / name) for name in FALLBACK_FILES if name not in own
            )
        changed: list[tuple[str, float, int]] = []
        for relpath, path in found:
            try:
                stat = path.stat()
            except OSError:
                continue
            if stat.st_mtime >= since:
                changed.append((relpath, stat.st_mtime, stat.st_size))
        return sorted(changed, key=lambda item: (-item[1], item[0]))

    def _target(self, path: str) -> tuple[str, Path]:
        relative = validate_relative_path(path)
        target = resolve_inside(self._home_of(relative), relative)
        if target.is_dir():
            raise InvalidPathError(f"{path!r} is a folder, not a file; pass a '.md' file path")
        return str(relative), target

    def _make_parents(self, relative: str, target: Path) -> None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as exc:
            raise InvalidPathError(
                f"cannot create the folders of {relative!r}: a file is in the way ({exc}); "
                "choose another path"
            ) from exc

    def write_file(self, path: str, content: str, check: ContentCheck | None = None) -> str:
        """Create or replace a file atomically, creating its folders; return its path.

        ``check(relative, before, after)`` sees the current text (empty for a new
        file) and the new one under the file's lock, and may refuse by raising.
        """
        if not isinstance(content, str):
            raise InvalidInputError(f"content must be a string, got {type(content).__name__}")
        check_size(content, f"content for {path!r}")
        relative, target = self._target(path)
        self._make_parents(relative, target)
        try:
            with lock_file(target):  # wait for an edit or append in progress
                if check is not None:
                    check(relative, read_markdown(target, strict=False), content)
                write_atomic(target, content)
        except FileNotFoundError:
            if check is not None:
                check(relative, "", content)
            write_atomic(target, content)  # a new file: nothing to wait for
        logger.info("wrote %s in %s", relative, self.root)
        return relative

    def edit_file(
        self,
        path: str,
        old_text: str,
        new_text: str,
        replace_all: bool = False,
        check: ContentCheck | None = None,
    ) -> int:
        """Replace ``old_text`` with ``new_text`` exactly; return the number of replacements.

        ``check(relative, before, after)`` sees the whole text before and after the
        edit (under the lock) and may refuse by raising; nothing is written then.

        Raises ``EditError`` when ``old_text`` is missing, or occurs more than once
        and ``replace_all`` is false. An agent editing a global bootstrap file it
        reads by fallback gets its own edited copy; making that copy holds the
        global file's lock, so concurrent first edits apply one after the other
        (the later ones edit the copy the first one made).
        """
        if not isinstance(old_text, str) or not isinstance(new_text, str):
            raise InvalidInputError("old_text and new_text must be strings")
        if not old_text:
            raise InvalidInputError(
                "the text to replace is empty",
                next_step=NextStep(
                    "pass the exact text to replace, or {} to replace the whole file", "write_file"
                ),
            )
        relative, target = self._target(path)
        while True:
            try:
                with lock_file(target):
                    return self._apply_edit(
                        relative, target, target, (old_text, new_text, replace_all), check
                    )
            except FileNotFoundError:
                pass  # no copy of its own (yet, or deleted meanwhile)
            _, source = self._locate_for_read(relative)
            if source == target:
                continue  # created meanwhile: edit it under its own lock
            try:
                with lock_file(source):
                    if target.exists():
                        continue  # another editor made the copy while we waited
                    self._make_parents(relative, target)
                    return self._apply_edit(
                        relative, source, target, (old_text, new_text, replace_all), check
                    )
            except FileNotFoundError:
                continue  # the global file was replaced meanwhile: look again

    def _apply_edit(
        self,
        relative: str,
        source: Path,
        target: Path,
        edit: tuple[str, str, bool],
        check: ContentCheck | None,
    ) -> int:
        text = read_markdown(source)
        updated, count = replaced(text, edit, relative)
        check_size(updated, f"{relative!r} after the edit")
        if check is not None:
            check(relative, text, updated)
        write_atomic(target, updated)
        logger.info("edited %s in %s (%d replacements)", relative, self.root, count)
        return count

    def delete_file(self, path: str) -> None:
        """Delete a file of this workspace (never a global file, USER.md included)."""
        relative = str(validate_relative_path(path))
        target = resolve_inside(self.root, relative)
        try:
            with lock_file(target):
                target.unlink()
        except FileNotFoundError as exc:
            raise NotFoundError(
                f"{relative!r} does not exist in the workspace", next_step=SEE_FILES
            ) from exc
        fsync_directory(target.parent)
        logger.info("deleted %s in %s", relative, self.root)


MAX_READ_BYTES = MAX_FILE_BYTES
"""Most bytes one read returns: a whole file, or the lines of one ``get``."""
_READ_IN_PARTS = (
    "read it in parts with memory_get and a line range (from_line, lines); CLI: "
    "`memdir get PATH --from N --lines M`; REST: GET /api/v1/files/PATH?from=N&lines=M"
)


def _read_lines(relative: str, path: Path, start: int, count: int | None) -> tuple[list[str], int]:
    """Lines ``start``.. (``count`` of them, or to the end) of ``path``, and its line count.

    Lines are split on '\\n' as everywhere in memdir; the chosen ones must be
    UTF-8 and hold at most ``MAX_READ_BYTES`` together.
    """
    chosen: list[bytes] = []
    size = total = 0
    with path.open("rb") as handle:
        for total, raw in enumerate(handle, start=1):
            if total < start or (count is not None and total >= start + count):
                continue
            size += len(raw)
            if size > MAX_READ_BYTES:
                raise InvalidInputError(_too_much(relative, start, total, len(chosen), len(raw)))
            chosen.append(raw.removesuffix(b"\n"))
    try:
        return [line.decode("utf-8") for line in chosen], total
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{relative!r} is not valid UTF-8 text ({exc.reason}); convert it to UTF-8 "
            "before reading or editing it with memdir"
        ) from exc


def _too_much(relative: str, start: int, line: int, fitting: int, line_bytes: int) -> str:
    if fitting == 0:
        return (
            f"line {line} of {relative!r} alone is {line_bytes:,} bytes, over the limit of "
            f"{MAX_READ_BYTES:,} bytes for one read; memdir cannot return it (open the file "
            "in an editor and split the line)"
        )
    return (
        f"lines {start}-{line} of {relative!r} are over the limit of {MAX_READ_BYTES:,} "
        f"bytes for one read; ask for at most {fitting} lines from line {start}, then go "
        f"on from line {start + fitting} ({_READ_IN_PARTS})"
    )
