"""Why something was recalled: an optional local trace of searches and recalls.

With ``trace.enabled`` each search and recall of a workspace appends one JSON line to
``<home>/index/trace-<source>.jsonl``: when, the query, who asked (the attribution in
force: agent, token, session, tool) and what came back (citations or fact ids, with their
scores, a breakdown of each hit's score and the start of its text). The file keeps the last
``trace.max_entries`` entries: when it has grown a fifth past them, it is cut back to
them under its lock. It lives beside the index, so it is neither versioned nor synced.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from memdir.history.attribution import current
from memdir.workspace.locking import lock_file

log = logging.getLogger(__name__)
T = TypeVar("T")
KINDS = ("search", "recall")
EXCERPT_CHARS = 200  # of each search hit's text: which words matched, not the whole note
TRACE_OFF = (
    "the trace is off: turn it on with the setting trace.enabled = true "
    "([trace] enabled = true in $MEMDIR_HOME/memdir.toml, or "
    "`memdir --set trace.enabled=true serve` for one server)"
)


@dataclass(frozen=True)
class TraceRead:
    """What reading the trace found: entries newest first, and how many lines were unreadable."""

    entries: list[dict[str, Any]]
    skipped: int


def _excerpt(text: str) -> str:
    """The start of a hit's text, enough to say which words matched (``EXCERPT_CHARS``)."""
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def _entry(line: str) -> dict[str, Any] | None:
    """The entry a trace line holds, or None for a line that holds none."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("hits", []), list):
        return None
    return entry


class Trace:
    """The trace of one workspace (``source``) of the home at ``root``."""

    def __init__(self, root: Path, source: str, enabled: bool, max_entries: int) -> None:
        safe = source.replace(":", "-")
        self.path = Path(root) / "index" / f"trace-{safe}.jsonl"
        self.enabled = enabled
        self.max_entries = max_entries

    def searched(self, query: str, hits: Sequence[Any]) -> None:
        found = [
            {"cited": h.citation, "score": round(h.score, 4),
             "breakdown": {k: round(v, 4) for k, v in h.breakdown.items()},
             "retired": None if h.retired is None else h.retired.kind,
             "text": _excerpt(h.text)}
            for h in hits
        ]  # fmt: skip
        self._append({"kind": "search", "query": query, "hits": found})

    def recalled(self, query: str, facts: list[T]) -> list[T]:
        """Trace a recall; its facts, unchanged."""
        recalled: Sequence[Any] = facts
        found = [
            {"fact": r.fact.id, "text": r.fact.text, "score": round(r.score, 4),
             "cited": r.fact.citation}
            for r in recalled
        ]  # fmt: skip
        self._append({"kind": "recall", "query": query, "hits": found})
        return facts

    def entries(self, limit: int = 20) -> list[dict[str, Any]]:
        """The last ``limit`` entries, newest first."""
        return self.read(limit).entries

    def read(self, limit: int = 20, kind: str | None = None) -> TraceRead:
        """The last ``limit`` entries (of ``kind``, ``search`` or ``recall``), newest first.

        A line that is no JSON object (torn by a crash mid-write, edited by hand) is
        skipped and counted, never an error: the trace describes, it is not memory.
        """
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return TraceRead([], 0)
        found: list[dict[str, Any]] = []
        skipped = 0
        for line in reversed(text.splitlines()):
            if not line.strip():
                continue
            entry = _entry(line)
            if entry is None:
                skipped += 1
            elif len(found) < limit and (kind is None or entry.get("kind") == kind):
                found.append(entry)
        return TraceRead(found, skipped)

    def _append(self, entry: dict[str, Any]) -> None:
        if not self.enabled:
            return
        who = {k: v for k, v in asdict(current()).items() if v and k != "reason"}
        record = {"time": datetime.now(UTC).isoformat(timespec="milliseconds"), **who, **entry}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with lock_file(self.path, create=True):
                with self.path.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(record, ensure_ascii=False) + "\n")
                self._trim()
        except OSError as exc:  # a trace never fails the search it describes
            log.warning("could not write the trace %s: %s", self.path, exc)

    def _trim(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True)
        if len(lines) <= self.max_entries + self.max_entries // 5:
            return
        self.path.write_text("".join(lines[-self.max_entries :]), encoding="utf-8")
