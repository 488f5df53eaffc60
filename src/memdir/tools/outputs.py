"""The structured results of the tools: what MCP sends as ``structuredContent`` beside the
text, and what CLI ``--json`` and the REST API return for the same operations.

An agent that expects JSON, such as one written for OpenClaw's memory tools, reads fields
instead of parsing text: each hit's path, line range, citation, score and text, the lines
``memory_get`` read, and for the file tools what MateClaw's workspace tool reports (whether
a write created the file or overwrote it, its size in bytes and when it last changed). A
citation is what ``memory_get`` takes back: its path carries a ``global:`` or
``agent:<id>:`` prefix when the file is not in the session's own workspace.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memdir.prompt import ContextReport
from memdir.search import SearchHit, SearchResults
from memdir.search.lifecycle import describe_retired
from memdir.store.fact_records import RetiredLine
from memdir.workspace import FileInfo, FileSlice, PromptFile


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetiredOutput(_Output):
    kind: str = Field(description="superseded, forgotten, or forget-record.")
    fact_id: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    forgotten_at: datetime | None = None
    reason: str | None = None
    summary: str = Field(description="The same in words.")

    @classmethod
    def of(cls, line: RetiredLine) -> RetiredOutput:
        return cls(
            kind=line.kind,
            fact_id=line.fact_id,
            valid_from=line.valid_from,
            valid_to=line.valid_to,
            forgotten_at=line.forgotten_at,
            reason=line.reason,
            summary=describe_retired(line),
        )


class HitOutput(_Output):
    path: str = Field(description="The path memory_get reads (prefixed for another workspace).")
    start_line: int = Field(description="First cited line (1-based).")
    end_line: int = Field(description="Last cited line (inclusive).")
    citation: str = Field(description="path:start_line-end_line, as you quote it.")
    score: float = Field(description="Confidence that the hit is relevant (see the tool).")
    text: str = Field(description="The cited lines, without memdir's own markup.")
    source: str = Field(description="The workspace: 'global' or 'agent:<id>'.")
    retired: RetiredOutput | None = Field(
        None, description="With include_history: why this line is no longer current."
    )
    breakdown: dict[str, float] = Field(
        default_factory=dict, description="How the score was made, signal by signal."
    )

    @classmethod
    def of(cls, hit: SearchHit) -> HitOutput:
        return cls(
            path=hit.path,
            start_line=hit.start_line,
            end_line=hit.end_line,
            citation=hit.citation,
            score=hit.score,
            text=hit.text,
            source=hit.source,
            retired=None if hit.retired is None else RetiredOutput.of(hit.retired),
            breakdown=dict(hit.breakdown),
        )


class SearchOutput(_Output):
    """The one structured search result: MCP ``structuredContent``, CLI ``--json``, the
    REST API's answer, and what the text renderers read."""

    query: str
    confidence: float | None = Field(
        description="Confidence that memory holds something relevant (the top score); "
        "null when scores are not calibrated."
    )
    notice: str = Field(description="Why nothing came back; empty when there are hits.")
    below_floor: bool = Field(
        False, description="Nothing came back, but weaker matches exist below min_score."
    )
    hits: list[HitOutput]

    @classmethod
    def of(cls, query: str, results: SearchResults) -> SearchOutput:
        return cls(
            query=query,
            confidence=results.confidence,
            notice=results.notice,
            below_floor=results.below_floor,
            hits=[HitOutput.of(hit) for hit in results.hits],
        )


class SliceOutput(_Output):
    path: str = Field(description="The file read (prefixed when not in your own workspace).")
    start_line: int
    end_line: int = Field(description="Last line read; start_line - 1 for an empty file.")
    total_lines: int
    citation: str = Field(description="path:start_line-end_line of what was read.")
    text: str = Field(description="The lines read, without line numbers.")

    @classmethod
    def of(cls, part: FileSlice) -> SliceOutput:
        return cls(
            path=part.path,
            start_line=part.start_line,
            end_line=part.end_line,
            total_lines=part.total_lines,
            citation=f"{part.path}:{part.start_line}-{part.end_line}",
            text=part.content,
        )


class FileMeta(_Output):
    path: str = Field(description="Workspace-relative path.")
    bytes: int = Field(description="Size of the file in bytes (UTF-8).")
    updated_at: datetime = Field(description="When the file last changed (UTC).")

    @classmethod
    def of(cls, info: FileInfo) -> FileMeta:
        return cls(path=info.path, bytes=info.bytes, updated_at=info.updated_at)


_SHA256 = Field(description="sha256 of the file's text: the expected_sha256 of a next change.")


class FileWritten(FileMeta):
    created: bool = Field(description="True: a new file; false: an existing file overwritten.")
    overwritten: bool = Field(description="True when an existing file was replaced.")
    sha256: str = _SHA256


class FileEdited(FileMeta):
    replacements: int = Field(description="How many occurrences were replaced.")


class FileRead(FileMeta):
    lines: int = Field(description="Number of lines in the file.")
    sha256: str = _SHA256


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
