"""``VectorDBBlock``: long-term records in daily notes, found again through memdir search.

``write_records`` appends the records to today's daily note as marked bullets
(see :mod:`memdir.camel.notes`) and syncs the index, so the records are
ordinary memory: ``memory_search``, the CLI and every other agent with access
to the workspace find them, cited as ``path:start-end``. ``retrieve`` runs
``Memory.search`` and maps each hit back to the records whose lines it covers,
each scored with the hit's score.

Tool calls and tool results are not written (they only make sense next to each
other, in the chat history); records holding them are skipped with a log line.
``clear()`` cannot erase anything (daily notes are append-only and the truth):
it makes this block ignore the records written before the call.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from datetime import datetime

from memdir.camel.notes import NoteRecord, format_record_entries, parse_note_records
from memdir.camel.records import ContextRecord, MemoryRecord, utc_now
from memdir.errors import InvalidInputError, NotFoundError
from memdir.memory import Memory, source_of

logger = logging.getLogger(__name__)

_WORD = re.compile(r"\w+", re.UNICODE)
SEARCH_OVERFETCH = 3


class VectorDBBlock:
    """Records kept in the daily notes of ``memory`` and retrieved with its hybrid search."""

    def __init__(self, memory: Memory, *, sync_index: bool = True) -> None:
        self.memory = memory
        self.sync_index = sync_index
        self._cleared_at: datetime | None = None

    def write_records(self, records: Iterable[MemoryRecord]) -> list[str]:
        """Append records to today's daily note; returns each one's ``path:start-end``."""
        kept: list[MemoryRecord] = []
        for record in records:
            if not isinstance(record, MemoryRecord):
                raise InvalidInputError(
                    f"write_records takes MemoryRecord values, got {type(record).__name__}"
                )
            if record.role == "tool" or record.message.tool_calls:
                logger.debug("record %s is a tool call or result; not written", record.uuid)
                continue
            kept.append(record)
        if not kept:
            return []
        text, offsets = format_record_entries(kept)
        location = self.memory.append_daily(text)
        if self.sync_index:
            self.memory.sync(optimize=False)
        ends = [*offsets[1:], location.end_line - location.start_line + 1]
        return [
            f"{location.path}:{location.start_line + start}-{location.start_line + end - 1}"
            for start, end in zip(offsets, ends, strict=True)
        ]

    def write_record(self, record: MemoryRecord) -> list[str]:
        return self.write_records([record])

    def retrieve(self, query: str, limit: int = 3) -> list[ContextRecord]:
        """The records best matching ``query``, best first, each with its search-hit score."""
        if limit < 1:
            raise InvalidInputError(f"limit must be at least 1, got {limit!r}")
        if not query.strip():
            return []
        results = self.memory.search(query, max_results=min(100, limit * SEARCH_OVERFETCH))
        own_source = source_of(self.memory.agent_id)
        query_words = set(_WORD.findall(query.casefold()))
        parsed: dict[str, list[NoteRecord]] = {}
        found: dict[str, ContextRecord] = {}
        for hit in results:
            if hit.source != own_source:
                continue
            covered = [
                n.record
                for n in self._records_of(hit.path, parsed)
                if n.start_line <= hit.end_line and n.end_line >= hit.start_line
            ]
            covered.sort(key=lambda r: (-_overlap(query_words, r.content), -r.importance))
            for record in covered:
                if record.uuid not in found:
                    found[record.uuid] = ContextRecord(record, hit.score)
        ranked = sorted(found.values(), key=lambda c: -c.score)  # stable: hit order breaks ties
        return ranked[:limit]

    def _records_of(self, path: str, parsed: dict[str, list[NoteRecord]]) -> list[NoteRecord]:
        if path not in parsed:
            try:
                text = self.memory.read_file(path)
            except NotFoundError:
                logger.info("search hit %s no longer exists; run memdir index sync", path)
                text = ""
            records = parse_note_records(path, text)
            if self._cleared_at is not None:
                cutoff = self._cleared_at
                records = [n for n in records if n.record.timestamp > cutoff]
            parsed[path] = records
        return parsed[path]

    def clear(self) -> None:
        """Ignore the records written so far (the daily-note lines stay; see the module doc)."""
        self._cleared_at = utc_now()


def _overlap(query_words: set[str], text: str) -> int:
    return len(query_words & set(_WORD.findall(text.casefold())))
