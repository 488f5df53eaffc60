"""Narrow hits: blocks that inherit chunk relevance, merged per file.

A ``block`` unit is one markdown block (a list item, a paragraph), a ``chunk``
is ~400 tokens of context. A block is scored by its own signals plus a share of
the best candidate chunk that contains it, so a short line in a relevant
passage rises. A relevant chunk none of whose blocks matched on its own is
returned whole. Hits of one file that overlap or touch are merged (the merged
hit keeps the better rank), so no line is returned twice.

Unit texts are the exact file lines of their range, so merged text is rebuilt
line by line.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from memdir.store.base import Unit

ABSORB_RATIO = 0.3
"""A touching block joins a better hit when at least this share of its relevance (which
includes what both inherit from their chunk: a relevant passage keeps its context)."""


@dataclass
class Candidate:
    """A span on its way to becoming a ``SearchHit``."""

    unit: Unit
    relevance: float
    breakdown: dict[str, float] = field(default_factory=dict)
    start_line: int = 0
    end_line: int = 0
    lines: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.start_line = self.unit.start_line
        self.end_line = self.unit.end_line
        self.lines = unit_lines(self.unit)

    @property
    def file_key(self) -> tuple[str, str]:
        return (self.unit.source, self.unit.path)

    @property
    def text(self) -> str:
        return "\n".join(self.lines.get(n, "") for n in range(self.start_line, self.end_line + 1))


def unit_lines(unit: Unit) -> dict[int, str]:
    """Map a unit's line numbers to its text lines (a mismatch keeps the text whole)."""
    parts = unit.text.split("\n")
    if len(parts) != unit.end_line - unit.start_line + 1:
        return {unit.start_line: unit.text}
    return {unit.start_line + i: part for i, part in enumerate(parts)}


def score_blocks(
    blocks: Mapping[int, float],
    chunks: Mapping[int, float],
    units: Mapping[int, Unit],
    chunk_share: float,
    neighbour_share: float = 0.0,
) -> list[Candidate]:
    """Blocks with inherited chunk and neighbour relevance, plus uncovered relevant chunks."""
    spans: dict[tuple[str, str], list[tuple[Unit, float]]] = defaultdict(list)
    for unit_id, score in chunks.items():
        unit = units.get(unit_id)
        if unit is not None:
            spans[(unit.source, unit.path)].append((unit, score))
    covered: set[int] = set()
    out: list[Candidate] = []
    near = neighbour_relevance(blocks, units)
    for unit_id, own in blocks.items():
        unit = units.get(unit_id)
        if unit is None:
            continue
        inherited = 0.0
        for chunk, score in spans.get((unit.source, unit.path), ()):
            if chunk.start_line <= unit.start_line and unit.end_line <= chunk.end_line:
                covered.add(chunk.id)
                inherited = max(inherited, score)
        beside = near.get(unit_id, 0.0)
        relevance = (
            (1.0 - chunk_share - neighbour_share) * own
            + chunk_share * inherited
            + neighbour_share * beside
        )
        out.append(
            Candidate(unit, relevance, {"fused": own, "chunk": inherited, "neighbour": beside})
        )
    share = chunk_share if blocks else 1.0
    for unit_id, score in chunks.items():
        unit = units.get(unit_id)
        if unit is not None and unit.id not in covered:
            out.append(Candidate(unit, share * score, {"fused": 0.0, "chunk": score}))
    return out


def neighbour_relevance(
    blocks: Mapping[int, float], units: Mapping[int, Unit], gap: int = 2
) -> dict[int, float]:
    """For each block, the best relevance of a candidate block at most ``gap`` lines away."""
    by_file: dict[tuple[str, str], list[tuple[int, int, int, float]]] = defaultdict(list)
    for unit_id, score in blocks.items():
        unit = units.get(unit_id)
        if unit is not None:
            by_file[(unit.source, unit.path)].append(
                (unit.start_line, unit.end_line, unit_id, score)
            )
    out: dict[int, float] = {}
    for spans in by_file.values():
        spans.sort()
        for i, (start, end, unit_id, _) in enumerate(spans):
            best = 0.0
            if i > 0 and start - spans[i - 1][1] <= gap:
                best = spans[i - 1][3]
            if i + 1 < len(spans) and spans[i + 1][0] - end <= gap:
                best = max(best, spans[i + 1][3])
            out[unit_id] = best
    return out


def merge_spans(ranked: Iterable[Candidate], limit: int) -> list[Candidate]:
    """Keep up to ``limit`` hits in rank order, folding overlapping/adjacent spans together.

    A weaker block touching a kept hit is folded in when it is at least
    ``ABSORB_RATIO`` as relevant, else dropped; either way no line is returned twice.
    """
    kept: list[Candidate] = []
    for candidate in ranked:
        target = next((k for k in kept if _touches(k, candidate)), None)
        if target is not None:
            # a wide chunk next to a narrow hit would only widen it: its relevance
            # already reached the blocks it contains
            if candidate.unit.kind == "block" and (
                candidate.relevance >= ABSORB_RATIO * target.relevance
            ):
                _absorb(target, candidate)
            continue
        if len(kept) >= limit:
            break
        kept.append(candidate)
    return _coalesce(kept)


def _coalesce(kept: list[Candidate]) -> list[Candidate]:
    """Fold hits that came to touch after absorbing neighbours (rank order kept)."""
    out: list[Candidate] = []
    for candidate in kept:
        target = next((k for k in out if _touches(k, candidate)), None)
        if target is None:
            out.append(candidate)
        else:
            _absorb(target, candidate)
    return out


def _touches(a: Candidate, b: Candidate) -> bool:
    return (
        a.file_key == b.file_key
        and b.start_line <= a.end_line + 1
        and a.start_line <= b.end_line + 1
    )


def _absorb(target: Candidate, other: Candidate) -> None:
    for number, line in other.lines.items():
        target.lines.setdefault(number, line)
    target.start_line = min(target.start_line, other.start_line)
    target.end_line = max(target.end_line, other.end_line)
