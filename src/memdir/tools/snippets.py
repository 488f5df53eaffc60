"""Search hits as an agent reads them: at most ``SNIPPET_MAX_CHARS`` characters each.

A hit is a block of a note, and a block can be long (a pasted log, a long paragraph).
Every interface that shows hits (MCP, REST, CLI) shows at most 500 characters of each,
cut at a line break or else between words, and says so: the hit keeps its citation, so
``memory_get`` reads all of it. The Python API (``Memory.search``) returns whole hits.
"""

from __future__ import annotations

from dataclasses import dataclass

SNIPPET_MAX_CHARS = 500
_SHORTEST_CUT = 0.5  # cut at a line or word boundary only in the second half of the limit


@dataclass(frozen=True)
class Snippet:
    text: str
    cut: bool
    total_chars: int


def cap_snippet(text: str, limit: int = SNIPPET_MAX_CHARS) -> Snippet:
    """``text`` as is when it fits in ``limit`` characters; else cut at the last line
    break, else the last space, in the second half of the limit (a hard cut without one)."""
    if len(text) <= limit:
        return Snippet(text, False, len(text))
    head = text[:limit]
    floor = int(limit * _SHORTEST_CUT)
    at = head.rfind("\n")
    if at < floor:
        at = max(head.rfind(" "), head.rfind("\t"))
    if at < floor:
        at = limit
    return Snippet(head[:at].rstrip(), True, len(text))
