"""The Markdown lines that carry facts in the daily notes, and their parser.

A saved fact is one bullet: readable text, then an HTML comment that Markdown
viewers hide::

    - My cat is called Luna <!-- memdir:fact id=f-ab12cd34ef cat=fact imp=5
      at=2026-11-22T10:01:02.123456Z supersedes=f-mnop234567 -->

(one line in the file; wrapped here). A fact saved with an end of validity carries
``until=<time>``: after it, the fact is history like a superseded one.

A forget and a reinforcement (a duplicate save that raised the importance)::

    - Forgot: My cat is Luna (reason: wrong cat) <!-- memdir:forget id=f-ab12cd34ef at=... -->
    - Reinforced: My cat is called Luna <!-- memdir:reinforce id=f-ab12cd34ef imp=8 at=... -->

The marker holds ``key=value`` pairs without spaces; unknown keys are ignored,
so later versions may add some. The text before the marker is the fact: a
person may edit it (the fact changes at the next sync) or delete the line (the
fact disappears). ``format_*`` and :func:`parse_fact_lines` round-trip exactly.
A line that names ``memdir:`` but does not parse is skipped with a warning.
"""

from __future__ import annotations

import base64
import logging
import re
import secrets
from datetime import UTC, datetime

from memdir.store.fact_records import EventKind, FactEvent

logger = logging.getLogger(__name__)

FACT_ID = re.compile(r"f-[a-z0-9]{10}")  # generated ids use base32 (a-z, 2-7)
CATEGORY_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
MARKER_OPEN = "<!--"
MARKER_CLOSE = "-->"

_LINE = re.compile(
    r"^\s*[-*+]\s+(?P<body>.*?)\s*<!--\s*memdir:(?P<kind>[a-z]+)\b(?P<attrs>[^>]*?)\s*-->\s*$"
)
_ATTR = re.compile(r"(\w+)=(\S*)")
_FORGET_BODY = re.compile(r"^Forgot:\s*(?P<text>.*)\s\(reason: (?P<reason>.*)\)$")
_REINFORCE_BODY = re.compile(r"^Reinforced:\s*(?P<text>.*)$")
_KINDS: tuple[EventKind, ...] = ("fact", "forget", "reinforce")


class MarkerError(ValueError):
    """A ``memdir:`` marker that cannot be read (internal: logged, never raised to callers)."""


def new_fact_id() -> str:
    """``f-`` and 10 random base32 characters (50 bits)."""
    return "f-" + base64.b32encode(secrets.token_bytes(10)).decode("ascii").lower()[:10]


def format_time(when: datetime) -> str:
    """UTC ISO 8601 with a ``Z``; microseconds only when present."""
    utc = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    spec = "microseconds" if utc.microsecond else "seconds"
    return utc.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def parse_time(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(
            value.replace("Z", "+00:00") if value.endswith("Z") else value
        )
    except ValueError as exc:
        raise MarkerError(f"bad time {value!r}") from exc
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_fact_line(
    fact_id: str,
    text: str,
    category: str,
    importance: int,
    at: datetime,
    supersedes: str | None = None,
    until: datetime | None = None,
) -> str:
    """The bullet that records a saved fact (no trailing newline)."""
    tail = f" supersedes={supersedes}" if supersedes else ""
    tail += f" until={format_time(until)}" if until else ""
    return (
        f"- {text} <!-- memdir:fact id={fact_id} cat={category} imp={importance} "
        f"at={format_time(at)}{tail} -->"
    )


def format_forget_line(fact_id: str, text: str, reason: str, at: datetime) -> str:
    """The bullet that records forgetting a fact, with the reason in readable text."""
    marker = f"<!-- memdir:forget id={fact_id} at={format_time(at)} -->"
    return f"- Forgot: {text} (reason: {reason}) {marker}"


def format_reinforce_line(fact_id: str, text: str, importance: int, at: datetime) -> str:
    """The bullet that records a duplicate save raising a fact's importance."""
    return (
        f"- Reinforced: {text} <!-- memdir:reinforce id={fact_id} imp={importance} "
        f"at={format_time(at)} -->"
    )


def format_event_line(event: FactEvent) -> str:
    """The note line that records ``event``: a save, a forget or a reinforcement (no
    trailing newline). ``parse_fact_lines`` reads it back as ``event`` at its line."""
    if event.kind == "forget":
        return format_forget_line(event.fact_id, event.text, event.reason or "", event.at)
    if event.kind == "reinforce":
        return format_reinforce_line(event.fact_id, event.text, event.importance, event.at)
    return format_fact_line(
        event.fact_id, event.text, event.category, event.importance, event.at, event.supersedes,
        event.until,
    )  # fmt: skip


def _attrs(raw: str) -> dict[str, str]:
    return {key: value for key, value in _ATTR.findall(raw)}


def _importance(attrs: dict[str, str], default: int) -> int:
    value = attrs.get("imp")
    if value is None:
        return default
    if not value.isdigit() or not 1 <= int(value) <= 10:
        raise MarkerError(f"importance {value!r} is not 1-10")
    return int(value)


def _event(path: str, line: int, kind: str, body: str, attrs: dict[str, str]) -> FactEvent:
    if kind not in _KINDS:
        raise MarkerError(f"unknown marker kind {kind!r}")
    fact_id = attrs.get("id", "")
    if not FACT_ID.fullmatch(fact_id):
        raise MarkerError(f"bad fact id {fact_id!r}")
    if "at" not in attrs:
        raise MarkerError("no at= time")
    at = parse_time(attrs["at"])
    if kind == "forget":
        match = _FORGET_BODY.match(body)
        if match is None:
            raise MarkerError("a forget line must read 'Forgot: <text> (reason: <reason>)'")
        return FactEvent(
            path, line, "forget", fact_id, at, match["text"].strip(), reason=match["reason"]
        )
    if kind == "reinforce":
        match = _REINFORCE_BODY.match(body)
        text = match["text"].strip() if match else body
        return FactEvent(
            path, line, "reinforce", fact_id, at, text, importance=_importance(attrs, 0)
        )
    if not body:
        raise MarkerError("the fact text is empty")
    category = attrs.get("cat", "fact")
    if not CATEGORY_NAME.fullmatch(category):
        raise MarkerError(f"bad category {category!r}")
    supersedes = attrs.get("supersedes") or None
    if supersedes is not None and not FACT_ID.fullmatch(supersedes):
        raise MarkerError(f"bad supersedes id {supersedes!r}")
    until = parse_time(attrs["until"]) if attrs.get("until") else None
    return FactEvent(
        path, line, "fact", fact_id, at, body, category, _importance(attrs, 5), supersedes,
        until=until,
    )  # fmt: skip


def parse_fact_lines(relpath: str, text: str) -> list[FactEvent]:
    """Every fact, forget and reinforce marker of one file, with its 1-based line number.

    Lines are counted on ``\\n`` as everywhere in memdir. Malformed markers are
    logged as warnings (``path:line`` and what is wrong) and skipped.
    """
    events: list[FactEvent] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if "memdir:" not in line:
            continue
        match = _LINE.match(line.rstrip("\r"))
        try:
            if match is None:
                if re.search(r"<!--\s*memdir:", line):
                    raise MarkerError(
                        "the line is not '- <text> <!-- memdir:<kind> key=value... -->'"
                    )
                continue
            events.append(
                _event(relpath, number, match["kind"], match["body"], _attrs(match["attrs"]))
            )
        except MarkerError as exc:
            logger.warning("skipping the malformed fact marker at %s:%d: %s", relpath, number, exc)
    return events
