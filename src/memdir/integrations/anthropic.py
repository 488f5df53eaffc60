"""Claude's memory tool (``memory_20250818``) kept in a memdir workspace.

``MemdirMemoryTool(memory)`` is a ``BetaAbstractMemoryTool`` of the Anthropic SDK: hand
it to ``client.beta.messages.tool_runner(tools=[...])`` and Claude's ``/memories`` is the
folder ``memories/`` (or ``folder``) of the memory's workspace. The six commands (view,
create, str_replace, insert, delete, rename) answer in the words of the SDK's reference
``BetaLocalFilesystemMemoryTool``, and each change goes through memdir's write path:

* ``create`` is create-only; ``str_replace`` and ``insert`` apply to the text they read
  (its sha256), and read again when another writer changed it meanwhile, so no change
  made meanwhile is lost; ``rename`` never replaces a file;
* every file is Markdown (``.md``) and searchable as soon as it is written (the other
  interfaces cite it as ``memories/...``); paths stay inside ``/memories``;
* a credential is refused with the SDK's ``ToolError``, as every other failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memdir.errors import (
    ConflictError,
    InvalidPathError,
    MemdirError,
    NotFoundError,
)
from memdir.integrations import missing
from memdir.workspace import validate_prefix, validate_relative_path
from memdir.workspace.paths import resolve_inside
from memdir.workspace.revisions import FileText, line_count

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
except ImportError as exc:  # pragma: no cover - exercised in an environment without it
    raise missing("anthropic", "anthropic", exc) from None

if TYPE_CHECKING:
    from anthropic.types.beta import (
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )

    from memdir.memory import Memory

__all__ = ["MemdirMemoryTool"]

ROOT = "/memories"
LINE_NUMBER_WIDTH = 6  # the SDK's reference tool numbers lines right-aligned in 6 columns
RETRIES = 50  # a change re-read after another writer's: how many times before giving up
T = TypeVar("T")


class MemdirMemoryTool(BetaAbstractMemoryTool):  # type: ignore[misc,unused-ignore]
    """Claude's memory tool over ``memory``'s workspace folder ``folder`` (``/memories``).

    The caller opens and closes ``memory`` (``Memory.open(home, agent_id)``); one tool
    per memory. ``cache_control`` is passed to the SDK's tool definition.
    """

    def __init__(
        self, memory: Memory, folder: str = "memories", *, cache_control: Any = None
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.memory = memory
        self.folder = validate_prefix(folder).strip("/")
        if not self.folder:
            raise InvalidPathError("folder must name a folder of the workspace, e.g. 'memories'")
        self.root = resolve_inside(memory.workspace.root, self.folder + "/x.md").parent
        self.root.mkdir(parents=True, exist_ok=True)

    # -- paths ------------------------------------------------------------------------
    def _relative(self, path: str) -> str:
        """The part of ``path`` below ``/memories`` ('' for the folder itself)."""
        if not isinstance(path, str) or not (path == ROOT or path.startswith(ROOT + "/")):
            raise ToolError(f"Path must start with /memories, got: {path}")
        return path[len(ROOT) :].strip("/")

    def _file(self, path: str) -> str:
        """The workspace path of a file under ``/memories`` (checked like every memdir path)."""
        below = self._relative(path)
        if not below:
            raise ToolError(f"The path {path} is not a file.")
        workspace_path = f"{self.folder}/{below}"
        try:
            validate_relative_path(workspace_path)
            resolve_inside(self.memory.workspace.root, workspace_path)
        except InvalidPathError as exc:
            if not below.endswith(".md"):
                raise ToolError(
                    f"memdir keeps memories as Markdown: name the file with '.md', e.g. "
                    f"{ROOT}/{below.rsplit('.', 1)[0] or 'notes'}.md"
                ) from exc
            raise ToolError(f"Path {path} would escape /memories directory") from exc
        return workspace_path

    def _named_file(self, path: str) -> str:
        """``_file`` for a path that names what may exist: a name that cannot be a memdir
        file (no '.md') is not there (``NotFoundError``), as a missing folder is not."""
        if not self._relative(path).endswith(".md"):
            raise NotFoundError(f"{path!r} does not exist")
        return self._file(path)

    def _existing_file(self, path: str) -> str:
        if self._folder(path) is not None:
            raise ToolError(f"The path {path} is not a file.")
        return self._file(path)

    def _folder(self, path: str) -> Path | None:
        """The folder ``path`` names, if it is one (inside the workspace), else None."""
        below = self._relative(path)
        if ".." in below.split("/"):
            raise ToolError(f"Path {path} would escape /memories directory")
        folder = self.root / below if below else self.root
        try:
            if not folder.resolve().is_relative_to(self.root.resolve()):
                raise ToolError(f"Path {path} would escape /memories directory")
        except OSError as exc:
            raise ToolError(f"Path {path} would escape /memories directory") from exc
        return folder if folder.is_dir() and not folder.is_symlink() else None

    def _files_under(self, folder: Path) -> list[str]:
        """Workspace paths of the Markdown files under ``folder``."""
        prefix = folder.relative_to(self.memory.workspace.root).as_posix() + "/"
        return self.memory.list_files(prefix)

    # -- the six commands -----------------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        with _tool_errors():
            folder = self._folder(command.path)
            if folder is not None:
                return self._view_folder(command.path, folder)
            try:
                content = self.memory.read_text(self._named_file(command.path)).content
            except NotFoundError:
                raise ToolError(
                    f"The path {command.path} does not exist. Please provide a valid path."
                ) from None
        lines = content.split("\n")
        start = 1
        if command.view_range and len(command.view_range) == 2:
            first, last = command.view_range
            start = max(1, first)
            lines = lines[start - 1 : len(lines) if last == -1 else last]
        numbered = [
            f"{str(n).rjust(LINE_NUMBER_WIDTH)}\t{line}" for n, line in enumerate(lines, start)
        ]
        return f"Here's the content of {command.path} with line numbers:\n" + "\n".join(numbered)

    def _view_folder(self, path: str, folder: Path) -> str:
        rows = [f"{_size(folder)}\t{path}"]
        for item, name in _walk(folder, depth=2):
            shown = f"{name}/" if item.is_dir() else name
            rows.append(f"{_size(item)}\t{path.rstrip('/')}/{shown}")
        header = (
            f"Here're the files and directories up to 2 levels deep in {path}, "
            "excluding hidden items:"
        )
        return f"{header}\n" + "\n".join(rows)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        with _tool_errors():
            target = self._file(command.path)
            try:
                self.memory.write_file(target, command.file_text, create_only=True)
            except ConflictError:
                raise ToolError(f"File {command.path} already exists") from None
        return f"File created successfully at: {command.path}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path, old, new = command.path, command.old_str, command.new_str
        with _tool_errors():
            target = self._existing_file(path)

            def replace_once() -> str:
                read = self._read_existing(target, path)
                _one_occurrence(read.content, old, path)
                self.memory.edit_file(target, old, new, expected_sha256=read.sha256)
                return read.content

            content = _retrying(replace_once)
        changed = content[: content.find(old)].count("\n")
        lines = content.replace(old, new, 1).split("\n")
        shown = range(max(0, changed - 2) + 1, min(len(lines), changed + 3) + 1)
        snippet = [f"{str(n).rjust(LINE_NUMBER_WIDTH)}\t{lines[n - 1]}" for n in shown]
        return (
            "The memory file has been edited. Here is the snippet showing the change (with "
            "line numbers):\n" + "\n".join(snippet)
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, line = command.path, command.insert_line
        with _tool_errors():
            target = self._existing_file(path)

            def insert_once() -> None:
                read = self._read_existing(target, path)
                total = line_count(read.content)
                if line < 0 or line > total:
                    raise ToolError(
                        f"Invalid `insert_line` parameter: {line}. It should be within the "
                        f"range [0, {total}]."
                    )
                text = command.insert_text.rstrip("\n")
                self.memory.insert_lines(target, line, text, expected_sha256=read.sha256)

            _retrying(insert_once)
        return f"The file {path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = command.path
        with _tool_errors():
            if not self._relative(path):
                raise ToolError("Cannot delete the /memories directory itself")
            folder = self._folder(path)
            if folder is not None:
                for file in self._files_under(folder):
                    self.memory.delete_file(file)
                shutil.rmtree(folder)
                return f"Successfully deleted {path}"
            try:
                self.memory.delete_file(self._named_file(path))
            except NotFoundError:
                raise ToolError(f"The path {path} does not exist") from None
        return f"Successfully deleted {path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old, new = command.old_path, command.new_path
        with _tool_errors():
            if not self._relative(old):
                raise ToolError("Cannot rename the /memories directory itself")
            folder = self._folder(old)
            if folder is not None:
                self._rename_folder(folder, old, new)
                return f"Successfully renamed {old} to {new}"
            source, target = self._file(old), self._file(new)
            if self._folder(new) is not None:
                raise ToolError(f"The destination {new} already exists")
            try:
                self.memory.rename_file(source, target)
            except ConflictError:
                raise ToolError(f"The destination {new} already exists") from None
            except NotFoundError:
                raise ToolError(f"The path {old} does not exist") from None
        return f"Successfully renamed {old} to {new}"

    def _rename_folder(self, folder: Path, old: str, new: str) -> None:
        below = self._relative(new)
        dest = self.root / below
        if not below or dest.exists() or dest.is_symlink():
            raise ToolError(f"The destination {new} already exists")
        if self._folder(new) is None and dest.resolve().is_relative_to(folder.resolve()):
            raise ToolError(f"Cannot move {old} into itself ({new})")
        source_prefix = folder.relative_to(self.memory.workspace.root).as_posix()
        for file in self._files_under(folder):
            moved = f"{self.folder}/{below}/{file[len(source_prefix) + 1 :]}"
            self.memory.rename_file(file, moved)
        with contextlib.suppress(OSError):  # left: only what memdir does not keep (not .md)
            shutil.rmtree(folder)

    def clear_all_memory(self) -> str:
        """Delete every file under ``/memories`` (each leaves the index)."""
        with _tool_errors():
            for file in self._files_under(self.root):
                self.memory.delete_file(file)
        shutil.rmtree(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        return "All memory cleared"

    def _read_existing(self, target: str, path: str) -> FileText:
        try:
            return self.memory.read_text(target)
        except NotFoundError:
            raise ToolError(
                f"The path {path} does not exist. Please provide a valid path."
            ) from None


def _one_occurrence(content: str, old: str, path: str) -> None:
    count = content.count(old)
    if count == 0:
        raise ToolError(
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
        )
    if count > 1:
        lines, start = [], 0
        while (found := content.find(old, start)) != -1:
            lines.append(content[:found].count("\n") + 1)
            start = found + 1
        raise ToolError(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
            f"{', '.join(map(str, lines))}. Please ensure it is unique"
        )


def _retrying(change: Callable[[], T]) -> T:
    """Run a read-then-change; when another writer changed the file in between (its
    sha256 no longer the one read), read again and decide again."""
    for _ in range(RETRIES - 1):
        try:
            return change()
        except ConflictError:
            continue
    return change()


@contextlib.contextmanager
def _tool_errors() -> Iterator[None]:
    """memdir's errors as the SDK's ``ToolError`` (the runner sends it as an error result)."""
    try:
        yield
    except MemdirError as exc:
        raise ToolError(str(exc)) from exc


def _size(path: Path) -> str:
    """A size as the SDK's reference tool prints it: 0B, 512B, 4.0K, 1.5M."""
    try:
        size = path.stat().st_size
    except OSError:
        return "0B"
    if size == 0:
        return "0B"
    unit = min((size.bit_length() - 1) // 10, 3)
    value = size / (1024**unit)
    number = f"{int(value)}" if value == int(value) else f"{value:.1f}"
    return number + "BKMG"[unit]


def _walk(folder: Path, depth: int, prefix: str = "") -> Iterator[tuple[Path, str]]:
    """Visible entries under ``folder``, ``depth`` levels deep, sorted by name."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if not (entry.is_dir() or entry.name.endswith(".md")):
            continue  # memdir keeps Markdown only
        item, name = Path(entry.path), f"{prefix}{entry.name}"
        yield item, name
        if depth > 1 and entry.is_dir():
            yield from _walk(item, depth - 1, f"{name}/")
