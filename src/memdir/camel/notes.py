"""Memory records as daily-note lines, and their parser.

A record is one Markdown bullet: the role, the text, then an HTML comment that
Markdown viewers hide and that carries the metadata::

    - user: I moved to Lyon in May <!-- camel:record id=9f0c... role=user imp=7
      at=2026-11-22T10:01:02.123456Z task=trip -->

(one line in the file; wrapped here). Text that spans lines continues on lines
indented by two spaces; the marker ends the last one. ``&``, ``<`` and ``>`` in
the text are written as ``&amp;``, ``&lt;`` and ``&gt;`` (what Markdown shows as
the characters), so no text can forge a marker of ours or of the facts layer.
``task`` and ``extra`` (JSON) are percent-encoded. Unknown keys are ignored.
Because the lines sit in ordinary daily notes, the indexer chunks and embeds
them like any other memory and ``memory_search`` finds them.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, unquote

from memdir.camel.records import MemoryRecord
from memdir.errors import InvalidInputError
from memdir.llm import Message
from memdir.llm.base import ROLES

logger = logging.getLogger(__name__)

MARKER_KIND = "camel:record"
_MARKER = re.compile(r" <!-- camel:record (?P<attrs>[^<>]*?) -->$")
_ATTR = re.compile(r"(\w+)=(\S*)")
_ENTITY = re.compile(r"&(amp|lt|gt);")
_UNESCAPE = {"amp": "&", "lt": "<", "gt": ">"}
INDENT = "  "


@dataclass(frozen=True)
class NoteRecord:
    """A record parsed from a note, with the 1-based inclusive lines it spans."""

    record: MemoryRecord
    start_line: int
    end_line: int


def escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape_text(text: str) -> str:
    return _ENTITY.sub(lambda m: _UNESCAPE[m[1]], text)


def format_time(when: datetime) -> str:
    """UTC ISO 8601 with microseconds and a ``Z``."""
    utc = when.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"


def format_record_entry(record: MemoryRecord) -> str:
    """The Markdown lines of one record (no trailing newline)."""
    text = escape_text(record.content.replace("\r\n", "\n").replace("\r", "\n"))
    first, *rest = text.split("\n")
    lines = [f"- {record.role}: {first}", *(INDENT + line for line in rest)]
    attrs = [
        f"id={record.uuid}",
        f"role={record.role}",
        f"imp={record.importance}",
        f"at={format_time(record.timestamp)}",
    ]
    if record.task_id is not None:
        attrs.append(f"task={quote(record.task_id, safe='')}")
    if record.extra:
        attrs.append(f"extra={quote(json.dumps(dict(record.extra), sort_keys=True), safe='')}")
    lines[-1] += f" <!-- {MARKER_KIND} {' '.join(attrs)} -->"
    return "\n".join(lines)


def format_record_entries(records: list[MemoryRecord]) -> tuple[str, list[int]]:
    """The lines of several records, and the line offset where each one starts."""
    offsets: list[int] = []
    parts: list[str] = []
    line = 0
    for record in records:
        entry = format_record_entry(record)
        offsets.append(line)
        parts.append(entry)
        line += entry.count("\n") + 1
    return "\n".join(parts), offsets


def parse_note_records(path: str, text: str) -> list[NoteRecord]:
    """Every record in the Markdown ``text`` of ``path``, in file order.

    A marker that does not parse is logged with ``path:line`` and skipped.
    """
    found: list[NoteRecord] = []
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        match = _MARKER.search(line)
        if match is None:
            continue
        start = _entry_start(lines, number)
        if start is None:
            logger.warning("skipping %s:%d: a camel:record marker outside a bullet", path, number)
            continue
        body = [lines[start - 1][2:], *(ln[len(INDENT) :] for ln in lines[start:number])]
        # (a blank continuation line, stripped by an editor, reads as an empty line)
        body[-1] = body[-1][: -len(match[0])]
        try:
            record = _record(match["attrs"], "\n".join(body))
        except (InvalidInputError, ValueError, KeyError) as exc:
            logger.warning("skipping the malformed record at %s:%d: %s", path, number, exc)
            continue
        found.append(NoteRecord(record, start, number))
    return found


def _entry_start(lines: list[str], marker_line: int) -> int | None:
    """The 1-based line of the bullet that the marker on ``marker_line`` closes."""
    number = marker_line
    while number >= 1:
        line = lines[number - 1]
        if line.startswith("- "):
            return number
        continuation = line.startswith(INDENT) or not line  # an editor may strip "  "
        if not continuation or (number < marker_line and _MARKER.search(line)):
            return None
        number -= 1
    return None


def _record(attrs_text: str, body: str) -> MemoryRecord:
    attrs = dict(_ATTR.findall(attrs_text))
    role = attrs.get("role", "")
    if role not in ROLES or role == "tool":
        raise ValueError(f"role {role!r} is not system, user or assistant")
    prefix = f"{role}: "
    content = unescape_text(body[len(prefix) :] if body.startswith(prefix) else body)
    extra = json.loads(unquote(attrs["extra"])) if "extra" in attrs else {}
    if not isinstance(extra, dict):
        raise ValueError(f"extra {extra!r} is not a JSON object")
    return MemoryRecord(
        message=Message(role, content),
        uuid=attrs.get("id", ""),
        timestamp=datetime.fromisoformat(attrs["at"].replace("Z", "+00:00")),
        importance=int(attrs["imp"]),
        task_id=unquote(attrs["task"]) if "task" in attrs else None,
        extra=extra,
    )
