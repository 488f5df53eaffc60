"""The history tools: list the versions of a file, see what one changed, put one back.

Every change of a workspace file is a version (``memdir.history``): who made it (agent,
token, session), with what (tool or command) and why. A session sees its own
workspace's versions only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memdir.facts.safety import MAX_REASON_CHARS
from memdir.history import Version
from memdir.tools.host import ToolHost
from memdir.tools.spec import ToolResult, ToolSpec

_VERSION = Field(
    pattern=r"^[0-9a-f]{7,40}$",
    description="A version id (7-40 hex digits) as memory_history lists it.",
)
_PATH = Field(
    min_length=1,
    max_length=512,
    description="Workspace-relative path such as 'MEMORY.md' or 'memory/2024-05-01.md'.",
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemoryHistoryArgs(_Args):
    path: str | None = Field(
        None,
        min_length=1,
        max_length=512,
        description="Only the versions of this file (e.g. 'MEMORY.md'); omit for all files.",
    )
    limit: int = Field(20, ge=1, le=500, description="At most this many versions, newest first.")


class MemoryDiffArgs(_Args):
    version: str = _VERSION
    path: str | None = Field(
        None, min_length=1, max_length=512, description="Only this file's part of the change."
    )


class MemoryRestoreArgs(_Args):
    path: str = _PATH
    version: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{7,40}$",
        description="Put the file back as it was at this version; omit to undo its last "
        "change (back to how it was before).",
    )
    reason: str | None = Field(
        None, min_length=1, max_length=MAX_REASON_CHARS, description="Why (kept in the history)."
    )


class VersionOutput(BaseModel):
    id: str = Field(description="The version id (give it to memory_diff or memory_restore).")
    time: datetime
    paths: list[str] = Field(description="The files this version changed.")
    agent: str | None = Field(description="The agent that made the change, if known.")
    token: str | None = Field(description="The name of the token used, if any.")
    session: str | None = Field(description="The session, if known.")
    tool: str | None = Field(description="The tool or command that made the change.")
    reason: str | None = Field(description="Why, as the change said.")

    @classmethod
    def of(cls, version: Version) -> VersionOutput:
        v = version
        return cls(
            id=v.id, time=v.time, paths=list(v.paths), agent=v.agent, token=v.token,
            session=v.session, tool=v.tool, reason=v.reason,
        )  # fmt: skip


class HistoryOutput(BaseModel):
    versions: list[VersionOutput]


class DiffOutput(BaseModel):
    id: str
    diff: str = Field(description="The unified diff of the change.")


class RestoreOutput(BaseModel):
    path: str
    restored_from: str = Field(description="The version the file now matches.")


def render_version(v: Version) -> str:
    who = ", ".join(
        f"{name} {value}"
        for name, value in (("agent", v.agent), ("token", v.token), ("session", v.session))
        if value
    )
    line = f"{v.id[:12]}  {v.time.isoformat(timespec='seconds')}  {v.tool or '-'}"
    line += f"  {', '.join(v.paths) or '-'}"
    if who:
        line += f"  ({who})"
    return line + (f"\n    why: {v.reason}" if v.reason else "")


def run_history(memory: ToolHost, args: MemoryHistoryArgs) -> ToolResult:
    versions = memory.history_versions(args.path, limit=args.limit)
    text = "\n".join(render_version(v) for v in versions) or "no versions yet"
    data = HistoryOutput(versions=[VersionOutput.of(v) for v in versions])
    return ToolResult(text, data.model_dump(mode="json"))


def run_diff(memory: ToolHost, args: MemoryDiffArgs) -> ToolResult:
    diff = memory.history_diff(args.version, args.path)
    output = DiffOutput(id=args.version, diff=diff)
    return ToolResult(diff or "that version changed nothing here", output.model_dump(mode="json"))


def run_restore(memory: ToolHost, args: MemoryRestoreArgs) -> ToolResult:
    if args.version is None:
        undone = memory.undo(args.path, reason=args.reason)
        text = f"undid version {undone[:12]} of {args.path}: it is as it was before"
        restored = memory.history_versions(args.path, limit=1)[0].id
    else:
        memory.restore(args.version, args.path, reason=args.reason)
        text, restored = f"restored {args.path} as of version {args.version}", args.version
    output = RestoreOutput(path=args.path, restored_from=restored)
    return ToolResult(text + " (the restore is a version too)", output.model_dump(mode="json"))


HISTORY_TOOLS: tuple[ToolSpec[Any], ...] = (
    ToolSpec(
        "memory_history",
        "List the versions of your workspace files, newest first: every save, write, edit, "
        "delete, consolidation and outside edit, with who made it (agent, token, session), "
        "the tool and the reason. Pass path for one file's versions. Use memory_diff to see "
        "what a version changed and memory_restore to put a file back.",
        MemoryHistoryArgs,
        run_history,
        output_model=HistoryOutput,
    ),
    ToolSpec(
        "memory_diff",
        "Show what one version (an id from memory_history) changed, as a unified diff; "
        "pass path for that file's part only.",
        MemoryDiffArgs,
        run_diff,
        output_model=DiffOutput,
    ),
    ToolSpec(
        "memory_restore",
        "Put a workspace file back as it was at a version from memory_history, or without "
        "version undo its last change. The restore is itself a new version, so it can be "
        "undone too. Give the reason.",
        MemoryRestoreArgs,
        run_restore,
        read_only=False,
        output_model=RestoreOutput,
        destructive=True,  # replaces the file's content
    ),
)
