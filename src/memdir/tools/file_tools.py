"""The file tools that change a file without a read-modify-write race, and the daily-note
append: ``memory_insert``, ``memory_rename_file``, ``memory_delete_file`` and
``memory_append_daily`` (their arguments, runners and specs; ``catalog`` lists them).

Each change can carry the ``expected_sha256`` that ``memory_read_file`` returned (or the
last change did): when the file changed since, nothing is written and the error says to
read it again. ``memory_write_file`` and ``memory_edit_file`` take it too (``args``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memdir.tools.args import MAX_CONTENT_CHARS
from memdir.tools.host import ToolHost
from memdir.tools.spec import ToolResult, ToolSpec
from memdir.workspace.revisions import line_count

EXPECTED_SHA256 = Field(
    None,
    min_length=64,
    max_length=64,
    description="The sha256 memory_read_file returned (or your last change of this file): "
    "the change applies only if the file still holds that text; if it changed, nothing is "
    "written and you read it again. Omit it to change whatever the file holds now.",
)
_PATH = Field(
    min_length=1,
    max_length=512,
    description="Workspace-relative Markdown path such as 'MEMORY.md' or 'notes/plan.md'.",
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemoryInsertArgs(_Args):
    path: str = _PATH
    line: int = Field(
        ge=0, le=10_000_000, description="0 inserts before the first line, n after line n."
    )
    text: str = Field(max_length=MAX_CONTENT_CHARS, description="The line(s) to insert.")
    expected_sha256: str | None = EXPECTED_SHA256


class MemoryRenameFileArgs(_Args):
    old_path: str = Field(min_length=1, max_length=512, description="The file to move.")
    new_path: str = Field(
        min_length=1, max_length=512, description="Where to (a '.md' path that is free)."
    )
    expected_sha256: str | None = EXPECTED_SHA256


class MemoryDeleteFileArgs(_Args):
    path: str = _PATH
    expected_sha256: str | None = EXPECTED_SHA256


class MemoryAppendDailyArgs(_Args):
    text: str = Field(
        min_length=1,
        max_length=MAX_CONTENT_CHARS,
        description="The entry, one line or many (e.g. a session summary in bullets).",
    )


class FileChanged(_Output):
    path: str = Field(description="Workspace-relative path.")
    sha256: str = Field(description="sha256 of the file's text now: your next expected_sha256.")
    lines: int = Field(description="Number of lines in the file now.")


class FileRenamed(_Output):
    old_path: str
    new_path: str


class FileDeleted(_Output):
    path: str
    deleted: bool


class NoteAppended(_Output):
    path: str = Field(description="Today's daily note.")
    start_line: int
    end_line: int
    citation: str = Field(description="path:start_line-end_line of the entry.")


def run_insert(memory: ToolHost, args: MemoryInsertArgs) -> ToolResult:
    after = memory.insert_lines(
        args.path, args.line, args.text, expected_sha256=args.expected_sha256
    )
    data = FileChanged(path=after.path, sha256=after.sha256, lines=line_count(after.content))
    where = "at the top" if args.line == 0 else f"after line {args.line}"
    text = f"Inserted into {after.path} {where}; it has {data.lines} lines (sha256 {data.sha256})."
    return ToolResult(text, data.model_dump(mode="json"))


def run_rename_file(memory: ToolHost, args: MemoryRenameFileArgs) -> ToolResult:
    old, new = memory.rename_file(
        args.old_path, args.new_path, expected_sha256=args.expected_sha256
    )
    data = FileRenamed(old_path=old, new_path=new)
    return ToolResult(f"Renamed {old} to {new}.", data.model_dump(mode="json"))


def run_delete_file(memory: ToolHost, args: MemoryDeleteFileArgs) -> ToolResult:
    memory.delete_file(args.path, expected_sha256=args.expected_sha256)
    data = FileDeleted(path=args.path, deleted=True)
    return ToolResult(f"Deleted {args.path}.", data.model_dump(mode="json"))


def run_append_daily(memory: ToolHost, args: MemoryAppendDailyArgs) -> ToolResult:
    where = memory.append_daily(args.text)
    data = NoteAppended(
        path=where.path, start_line=where.start_line, end_line=where.end_line,
        citation=where.cite(),
    )  # fmt: skip
    return ToolResult(f"Appended to today's note: {where.cite()}.", data.model_dump(mode="json"))


FILE_TOOLS: tuple[ToolSpec[Any], ...] = (
    ToolSpec(
        "memory_insert",
        "Insert lines into a workspace file at a line number, keeping every other line: "
        "line 0 inserts before the first line, n after line n (memory_get shows the "
        "numbers). Pass expected_sha256 from memory_read_file so a change someone made "
        "meanwhile is never overwritten.",
        MemoryInsertArgs,
        run_insert,
        read_only=False,
        output_model=FileChanged,
    ),
    ToolSpec(
        "memory_rename_file",
        "Rename or move a workspace Markdown file (e.g. notes/draft.md to archive/2024.md). "
        "Never replaces a file: if new_path exists the call fails and nothing moves. Search "
        "finds the file under its new path at once.",
        MemoryRenameFileArgs,
        run_rename_file,
        read_only=False,
        output_model=FileRenamed,
    ),
    ToolSpec(
        "memory_delete_file",
        "Delete a workspace Markdown file of your own (never a shared global one); it "
        "leaves the search index. Pass expected_sha256 from memory_read_file to delete it "
        "only if nobody changed it since you read it. Use memory_forget for a single fact.",
        MemoryDeleteFileArgs,
        run_delete_file,
        read_only=False,
        output_model=FileDeleted,
        destructive=True,
    ),
    ToolSpec(
        "memory_append_daily",
        "Append an entry of one or many lines (e.g. a 10-line session summary) to today's "
        "daily note in one call, safely beside concurrent saves: nothing is read or "
        "rewritten. Returns the entry's citation. Use memory_save for a single fact.",
        MemoryAppendDailyArgs,
        run_append_daily,
        read_only=False,
        output_model=NoteAppended,
    ),
)
"""The file tools beyond DESIGN.md's list, in the order the catalog appends them."""
