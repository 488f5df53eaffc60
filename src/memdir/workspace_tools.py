"""The workspace-level agent tools and the structured results of the file tools.

``ToolResult`` is what a tool returns: text for the model and, for some tools, data
that MCP sends as ``structuredContent``, shaped by the tool's ``output_model`` (its
JSON schema is the MCP ``outputSchema``). The file tools carry what MateClaw's
workspace tool reports: whether a write created the file or overwrote it, its size
in bytes and when it last changed. The runners here serve ``memory_finish_ritual``,
``memory_context`` and ``memory_set_prompt_file``; ``memdir.tools`` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memdir.errors import NotFoundError

if TYPE_CHECKING:
    from memdir.memory import Memory
    from memdir.prompt import ContextReport
    from memdir.workspace import FileInfo, PromptFile


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns: text for the model and, for some tools, structured data
    (MCP ``structuredContent``, shaped by the tool's ``output_model``)."""

    text: str
    data: dict[str, Any] | None = None


def file_exists(memory: Memory, path: str) -> bool:
    """Whether ``path`` names a file ``memory_read_file`` would find."""
    try:
        memory.file_info(path)
    except NotFoundError:
        return False
    return True


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FileMeta(_Output):
    path: str = Field(description="Workspace-relative path.")
    bytes: int = Field(description="Size of the file in bytes (UTF-8).")
    updated_at: datetime = Field(description="When the file last changed (UTC).")

    @classmethod
    def of(cls, info: FileInfo) -> FileMeta:
        return cls(path=info.path, bytes=info.bytes, updated_at=info.updated_at)


class FileWritten(FileMeta):
    created: bool = Field(description="True: a new file; false: an existing file overwritten.")
    overwritten: bool = Field(description="True when an existing file was replaced.")


class FileEdited(FileMeta):
    replacements: int = Field(description="How many occurrences were replaced.")


class FileRead(FileMeta):
    lines: int = Field(description="Number of lines in the file.")


class FileList(_Output):
    prefix: str
    files: list[FileMeta]


class RitualFinished(_Output):
    finished: bool = Field(description="True when BOOTSTRAP.md was deleted by this call.")


class PromptFileSetting(_Output):
    path: str
    enabled: bool
    sort_order: int
    origin: str = Field(description="default, global (prompt.toml) or agent (its prompt.toml).")

    @classmethod
    def of(cls, setting: PromptFile) -> PromptFileSetting:
        return cls(
            path=setting.path,
            enabled=setting.enabled,
            sort_order=setting.sort_order,
            origin=setting.origin,
        )


def report_data(report: ContextReport) -> dict[str, Any]:
    """The context report as JSON-ready data (files, notes, totals, counts)."""

    def file_row(item: Any) -> dict[str, Any]:
        return {
            "name": item.name,
            "status": str(item.status),
            "enabled": item.enabled,
            "sort_order": item.sort_order,
            "raw_chars": item.raw_chars,
            "injected_chars": item.injected_chars,
            "injected_tokens": item.injected_tokens,
            "note": item.note,
        }

    return {
        "session_kind": report.session_kind,
        "workspace": report.workspace,
        "files": [file_row(item) for item in report.files],
        "recent_notes": [file_row(item) for item in report.recent_notes],
        "left_out": list(report.left_out),
        "skills": report.skills,
        "tools": report.tools,
        "prompt_chars": report.prompt_chars,
        "prompt_tokens": report.prompt_tokens,
        "truncated": report.truncated,
    }


def render_report(report: ContextReport) -> str:
    """The context report as text for an agent: one line per file, then the counts."""
    lines = [
        f"System prompt of {report.workspace} ({report.session_kind} session): "
        f"{report.prompt_chars} chars, ~{report.prompt_tokens} tokens; "
        f"{report.skills} skill(s), {report.tools} tool(s)."
    ]
    for item in (*report.files, *report.recent_notes):
        order = "" if item.sort_order is None else f" order {item.sort_order}"
        note = f" ({item.note})" if item.note else ""
        lines.append(
            f"- {item.name}: {item.status}{order}, {item.injected_chars}/{item.raw_chars} "
            f"chars{note}"
        )
    if report.left_out:
        lines.append(f"Left out of this session: {', '.join(report.left_out)}.")
    return "\n".join(lines)


# -- the workspace-level tools: arguments and runners -----------------------------------


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class MemoryFinishRitualArgs(_Args):
    pass


class MemoryContextArgs(_Args):
    session_kind: Literal["private", "group", "shared"] | None = Field(
        None,
        description="private (you and your human), group or shared; default: configured.",
    )


class MemorySetPromptFileArgs(_Args):
    path: str = Field(
        min_length=1,
        max_length=512,
        description="Workspace-relative Markdown path such as 'TOOLS.md' or 'notes/style.md'.",
    )
    enabled: bool | None = Field(None, description="true: inject it; false: leave it out.")
    sort_order: int | None = Field(
        None, ge=-10_000, le=10_000, description="Position: lower goes first (AGENTS.md is 10)."
    )

    @model_validator(mode="after")
    def _something_to_set(self) -> MemorySetPromptFileArgs:
        if self.enabled is None and self.sort_order is None:
            raise ValueError("pass enabled and/or sort_order")
        return self


def finish_ritual(memory: Memory, args: MemoryFinishRitualArgs) -> ToolResult:
    finished = memory.finish_ritual()
    text = (
        "First-run ritual finished: BOOTSTRAP.md is deleted and will not come back."
        if finished
        else "No first-run ritual is under way: this workspace has no BOOTSTRAP.md."
    )
    return ToolResult(text, RitualFinished(finished=finished).model_dump(mode="json"))


def context(memory: Memory, args: MemoryContextArgs) -> ToolResult:
    report = memory.context_report(session_kind=args.session_kind)
    return ToolResult(render_report(report), report_data(report))


def set_prompt_file(memory: Memory, args: MemorySetPromptFileArgs) -> ToolResult:
    setting = memory.set_prompt_file(args.path, enabled=args.enabled, sort_order=args.sort_order)
    state = "in the prompt" if setting.enabled else "out of the prompt"
    text = f"{setting.path} is {state}, sort order {setting.sort_order} (prompt.toml)."
    return ToolResult(text, PromptFileSetting.of(setting).model_dump(mode="json"))
