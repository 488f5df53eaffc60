"""``ToolHost``: what the agent tools ask of memory, and nothing more.

``memdir.memory.Memory`` is the host every interface passes in. The tools depend on this
protocol rather than on the facade, so the facade can name its tools (the system prompt
lists them) without an import cycle, and a host that checks or narrows what a caller may
do can stand in for it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol

from memdir.facts import Fact, RecalledFact, SaveOutcome
from memdir.facts.activity import RecentActivity
from memdir.history import Version
from memdir.prompt import ContextReport
from memdir.search import SearchResults
from memdir.workspace import FileInfo, FileSlice, NoteLocation, PromptFile
from memdir.workspace.revisions import FileText

Scope = Literal["agent", "global", "all"]
"""How far a search reaches: the session's workspace and the global one (``agent``), the
global one only, or every agent's (docs/architecture.md, "Glossary")."""


class ToolHost(Protocol):
    """The operations the tools run (``memdir.memory.Memory`` has each of them)."""

    def search(
        self,
        query: str,
        max_results: int | None = None,
        min_score: float | None = None,
        scope: Scope = "agent",
        include_history: bool = False,
    ) -> SearchResults: ...

    def get(
        self, path: str, from_line: int | None = None, lines: int | None = None
    ) -> FileSlice: ...

    def save(
        self, content: str, category: str | None = None, importance: int | None = None
    ) -> SaveOutcome: ...

    def recall(
        self, query: str, category: str | None = None, as_of: datetime | None = None, limit: int = 5
    ) -> list[RecalledFact]: ...

    def forget(
        self, fact_id: str | None = None, query: str | None = None, reason: str = ""
    ) -> Fact: ...

    def list_facts(
        self,
        category: str | None = None,
        as_of: datetime | None = None,
        include_superseded: bool = False,
        include_forgotten: bool = False,
    ) -> list[Fact]: ...

    def recent(self, days: float = 7.0, limit: int = 20) -> RecentActivity: ...

    def list_files(self, prefix: str = "") -> list[str]: ...

    def file_info(self, path: str) -> FileInfo: ...

    def read_file(self, path: str) -> str: ...

    def read_text(self, path: str) -> FileText: ...

    def write_file(
        self,
        path: str,
        content: str,
        *,
        expected_sha256: str | None = None,
        create_only: bool = False,
    ) -> str: ...

    def edit_file(
        self,
        path: str,
        old_text: str,
        new_text: str,
        replace_all: bool = False,
        *,
        expected_sha256: str | None = None,
    ) -> int: ...

    def insert_lines(
        self, path: str, line: int, text: str, *, expected_sha256: str | None = None
    ) -> FileText: ...

    def rename_file(
        self, old_path: str, new_path: str, *, expected_sha256: str | None = None
    ) -> tuple[str, str]: ...

    def delete_file(self, path: str, *, expected_sha256: str | None = None) -> None: ...

    def append_daily(self, text: str, date: datetime | None = None) -> NoteLocation: ...

    def finish_ritual(self) -> bool: ...

    def context_report(
        self, now: datetime | None = None, *, session_kind: str | None = None
    ) -> ContextReport: ...

    def set_prompt_file(
        self, path: str, *, enabled: bool | None = None, sort_order: int | None = None
    ) -> PromptFile: ...

    def history_versions(self, path: str | None = None, limit: int = 20) -> list[Version]: ...

    def history_diff(self, version: str, path: str | None = None) -> str: ...

    def restore(self, version: str, path: str, reason: str | None = None) -> str: ...

    def undo(self, path: str, reason: str | None = None) -> str: ...
