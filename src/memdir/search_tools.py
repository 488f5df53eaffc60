"""The structured results of ``memory_search`` and ``memory_get``.

MCP sends them as ``structuredContent`` beside the text (``memdir.tools``), so an agent that
expects JSON, such as one written for OpenClaw's memory tools, reads fields instead of
parsing text: each hit's path, line range, citation, score and text, and the lines
``memory_get`` read. A citation is what ``memory_get`` takes back: its path carries a
``global:`` or ``agent:<id>:`` prefix when the file is not in the session's own workspace.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from memdir.search import SearchHit, SearchResults
from memdir.search.lifecycle import describe_retired
from memdir.store.fact_records import RetiredLine
from memdir.workspace import FileSlice


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

    @classmethod
    def of(cls, hit: SearchHit) -> HitOutput:
        return cls(
            path=hit.cited_path or hit.path,
            start_line=hit.start_line,
            end_line=hit.end_line,
            citation=hit.citation,
            score=hit.score,
            text=hit.text,
            source=hit.source,
            retired=None if hit.retired is None else RetiredOutput.of(hit.retired),
        )


class SearchOutput(_Output):
    query: str
    confidence: float | None = Field(
        description="Confidence that memory holds something relevant (the top score); "
        "null when scores are not calibrated."
    )
    notice: str = Field(description="Why nothing came back; empty when there are hits.")
    hits: list[HitOutput]

    @classmethod
    def of(cls, query: str, results: SearchResults) -> SearchOutput:
        return cls(
            query=query,
            confidence=results.confidence,
            notice=results.notice,
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
