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

from memdir.search.neighbours import Adjacency
from memdir.store.contracts import Unit
from memdir.store.fact_records import RetiredLine

ABSORB_RATIO = 0.5
"""A touching block joins a better hit when at least this share of its relevance (which
includes what both inherit from their chunk: a relevant passage keeps its context)."""

BEFORE_RATIO = 0.5
"""The block before a candidate inherits this share of what the block after it does."""


@dataclass
class Candidate:
    """A span on its way to becoming a ``SearchHit``."""

    unit: Unit
    relevance: float
    breakdown: dict[str, float] = field(default_factory=dict)
    score: float = 0.0  # what the hit reports: set by search once relevance is final
    start_line: int = 0
    end_line: int = 0
    retired: RetiredLine | None = None  # a line that holds no current fact (history)
    _lines: dict[int, str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.start_line = self.unit.start_line
        self.end_line = self.unit.end_line

    def narrowed(self, start: int, end: int) -> Candidate:
        """A copy that spans lines ``start``..``end`` of this one."""
        piece = Candidate(self.unit, self.relevance, dict(self.breakdown), self.score)
        piece.start_line, piece.end_line = start, end
        piece._lines = {n: t for n, t in self.lines.items() if start <= n <= end}
        return piece

    @property
    def lines(self) -> dict[int, str]:
        """Line number -> text of the span so far (split from the unit on first use:
        most candidates never become hits)."""
        if self._lines is None:
            self._lines = unit_lines(self.unit)
        return self._lines

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
    near: Mapping[int, float] | None = None,
) -> list[Candidate]:
    """Blocks with inherited chunk and neighbour relevance, plus uncovered relevant chunks.

    ``near`` (from ``neighbour_relevance``) is what blocks next to the candidates add
    to their relevance; such a block that is no candidate itself joins with no
    relevance of its own.
    """
    spans: dict[tuple[str, str], list[tuple[Unit, float]]] = defaultdict(list)
    for unit_id, score in chunks.items():
        unit = units.get(unit_id)
        if unit is not None:
            spans[(unit.source, unit.path)].append((unit, score))
    covered: set[int] = set()
    out: list[Candidate] = []
    near = near or {}
    for unit_id in dict.fromkeys([*blocks, *near]):
        unit = units.get(unit_id)
        if unit is None:
            continue
        own = blocks.get(unit_id, 0.0)
        inherited = 0.0
        for chunk, score in spans.get((unit.source, unit.path), ()):
            if chunk.start_line <= unit.start_line and unit.end_line <= chunk.end_line:
                covered.add(chunk.id)
                inherited = max(inherited, score)
        beside = near.get(unit_id, 0.0)
        relevance = (1.0 - chunk_share) * own + chunk_share * inherited + beside
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
    blocks: Mapping[int, float],
    adjacency: Mapping[int, Adjacency],
    units: Mapping[int, Unit],
    neighbour_share: float,
    answer_share: float = 0.0,
) -> dict[int, float]:
    """What each block near a candidate adds to its relevance (the best over its sources).

    A block after a candidate gets ``neighbour_share`` of the candidate's relevance, a
    block before it ``BEFORE_RATIO`` of that. The block right after a candidate that
    asks a question (a ``?`` in it) gets at least ``answer_share`` of its relevance:
    the answer rarely repeats the words of the question.
    """
    out: dict[int, float] = {}

    def lift(unit_id: int, value: float) -> None:
        if value > 0.0:
            out[unit_id] = max(out.get(unit_id, 0.0), value)

    for unit_id, around in adjacency.items():
        score = blocks.get(unit_id, 0.0)
        for after in around.after:
            lift(after, neighbour_share * score)
        for before in around.before:
            lift(before, neighbour_share * BEFORE_RATIO * score)
        if around.after and answer_share > 0.0 and asks_question(units[unit_id]):
            lift(around.after[0], answer_share * score)
    return out


def asks_question(unit: Unit) -> bool:
    """True for a block with a question mark: the next block is likely its answer."""
    return "?" in unit.text


def merge_spans(
    ranked: Iterable[Candidate], limit: int, absorb_ratio: float = ABSORB_RATIO
) -> list[Candidate]:
    """Keep up to ``limit`` hits in rank order, folding overlapping/adjacent spans together.

    A weaker block touching a kept hit is folded in when it is at least ``absorb_ratio``
    as relevant; a weaker one stays a hit of its own further down, and so does a block
    that is only a neighbour (no relevance of its own): the best hits stay narrow. A
    span overlapping a kept hit is dropped, so no line is returned twice.
    """
    kept: list[Candidate] = []
    for candidate in ranked:
        target = next((k for k in kept if _touches(k, candidate)), None)
        if target is not None:
            # a wide chunk next to a narrow hit would only widen it: its relevance
            # already reached the blocks it contains; a retired line stays apart
            if (
                candidate.unit.kind == "block"
                and not is_neighbour_only(candidate)
                and candidate.retired is None
                and target.retired is None
                and (candidate.relevance >= absorb_ratio * target.relevance)
            ):
                _absorb(target, candidate)
                continue
            if any(_overlaps(k, candidate) for k in kept):
                continue
        if len(kept) >= limit:
            break
        kept.append(candidate)
    return kept


def is_neighbour_only(candidate: Candidate) -> bool:
    """A block that is a candidate only because it sits next to one."""
    return candidate.unit.kind == "block" and candidate.breakdown.get("fused", 1.0) == 0.0


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


def _overlaps(a: Candidate, b: Candidate) -> bool:
    return a.file_key == b.file_key and b.start_line <= a.end_line and a.start_line <= b.end_line
