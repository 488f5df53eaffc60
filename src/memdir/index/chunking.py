"""Markdown-aware chunking into ``chunk`` and ``block`` spans.

Chunks are about ``chunk_tokens`` long (token estimate: ``ceil(chars / 4)``)
and the next chunk repeats up to ``overlap_tokens`` of whole lines from the end
of the previous one. Chunks are packed from whole blocks (a code block, table,
list item or paragraph stays in one chunk when it fits), never split a line,
and a new section (a heading) starts a new chunk once the current one is half
full. Blocks are one span per markdown block (headings, rules and front matter
are not blocks); a block over ``chunk_tokens`` is split on line boundaries.

Every span knows its 1-based inclusive line range and its heading path; its
text is the lines of that range joined by ``\\n``, without memdir's own markers
(``memdir.workspace.markup``): what a person sees in a Markdown viewer.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate

from memdir.errors import InvalidInputError
from memdir.index.markdown import (
    Block,
    HeadingStack,
    block_is_final,
    open_front_matter,
    scan_blocks_from,
)
from memdir.store.contracts import UnitKind
from memdir.text import split_lines
from memdir.workspace.markup import strip_markers

_NOT_BLOCKS = frozenset({"heading", "rule", "front_matter"})
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?", re.MULTILINE)
"""A list item's marker (and task box): Markdown syntax, not words to embed."""


@dataclass(frozen=True)
class ChunkingOptions:
    """Chunk size and overlap, in estimated tokens (``ceil(chars / 4)``)."""

    chunk_tokens: int = 400
    overlap_tokens: int = 80

    def __post_init__(self) -> None:
        if self.chunk_tokens < 1:
            raise InvalidInputError(f"chunk_tokens must be >= 1, got {self.chunk_tokens!r}")
        if not 0 <= self.overlap_tokens < self.chunk_tokens:
            raise InvalidInputError(
                f"overlap_tokens must be >= 0 and below chunk_tokens ({self.chunk_tokens}), "
                f"got {self.overlap_tokens!r}"
            )


@dataclass(frozen=True)
class Span:
    """A chunk or block of one file, before the store gives it an id."""

    kind: UnitKind
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    text: str
    heading_path: tuple[str, ...]


def embedding_text(kind: UnitKind, heading_path: tuple[str, ...], text: str) -> str:
    """What gets embedded: the span's words without list syntax; a chunk's heading path
    first (``"heading > path\\n\\ntext"``), a block alone.

    A block's vector says what its lines say, so its cosine to a query is evidence that
    compares across queries (``memdir.search.calibration``): headings such as a note's
    date, or ``- `` before every line, would weigh as much as a short line's words. A
    block's context still counts: it inherits from the chunks around it, and full-text
    search reads the heading path.
    """
    content = _LIST_MARKER.sub("", text)
    if kind == "block" or not heading_path:
        return content
    return " > ".join(heading_path) + "\n\n" + content


CHUNK_VECTOR_KEY = "chunk vector: mean of its blocks\n"
"""What a chunk's cache key starts with: its vector is derived from its blocks'
(``memdir.index.chunk_vectors``), not the model's reading of its text, so it must
never be taken for (or from) the cached embedding of the same text."""


def text_sha256(kind: UnitKind, heading_path: tuple[str, ...], text: str) -> str:
    """The cache key of a span: sha256 of its embedding text (a chunk's prefixed with
    ``CHUNK_VECTOR_KEY``)."""
    key = embedding_text(kind, heading_path, text)
    if kind == "chunk":
        key = CHUNK_VECTOR_KEY + key
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class _Document:
    """Lines with prefix sums, so the token estimate of any line range is O(1)."""

    def __init__(self, lines: list[str], ends: list[int] | None = None) -> None:
        self.lines = lines
        self._ends = [0, *accumulate(len(line) + 1 for line in lines)] if ends is None else ends

    def extended(self, kept: int, tail: list[str]) -> _Document:
        """The first ``kept`` lines of this document, then ``tail``."""
        ends = self._ends[: kept + 1]
        ends.extend(accumulate((len(line) + 1 for line in tail), initial=ends[-1]))
        ends.pop(kept + 1)  # (the initial value, repeated)
        return _Document(self.lines[:kept] + tail, ends)

    def tokens(self, start: int, end: int) -> int:
        """Estimated tokens of lines ``start``..``end`` (0-based, inclusive) joined by newlines."""
        chars = self._ends[end + 1] - self._ends[start] - 1
        return -(-chars // 4)

    def span(self, kind: UnitKind, start: int, end: int, headings: tuple[str, ...]) -> Span:
        text = "\n".join(self.lines[start : end + 1])
        return Span(kind, start + 1, end + 1, text, headings)


def _split_block(doc: _Document, block: Block, opts: ChunkingOptions) -> list[Block]:
    """Cut a block over ``chunk_tokens`` into line runs (a long line stands alone).

    The runs are ``chunk_tokens - overlap_tokens`` long, so that a chunk holding one
    run still has room for the overlap. Runs never start or end with a blank line.
    """
    if doc.tokens(block.start, block.end) <= opts.chunk_tokens:
        return [block]
    limit = max(1, opts.chunk_tokens - opts.overlap_tokens)
    runs: list[tuple[int, int]] = []
    start = block.start
    for index in range(block.start, block.end + 1):
        if index > start and doc.tokens(start, index) > limit:
            runs.append((start, index - 1))
            start = index
    runs.append((start, block.end))
    pieces = []
    for first, last in runs:
        while first <= last and not doc.lines[first].strip():
            first += 1
        while last >= first and not doc.lines[last].strip():
            last -= 1
        if first <= last:
            pieces.append(Block(block.kind, first, last, block.heading_path))
    return pieces


def _overlap_start(
    doc: _Document, chunk: tuple[int, int], nxt: Block, opts: ChunkingOptions
) -> int:
    """First line of the chunk after ``chunk``: repeat its tail within the overlap budget."""
    first, last = chunk
    start = nxt.start
    for candidate in range(last, first, -1):
        if doc.tokens(candidate, last) > opts.overlap_tokens:
            break
        if doc.tokens(candidate, nxt.end) > opts.chunk_tokens:
            break
        start = candidate
    while start < nxt.start and not doc.lines[start].strip():
        start += 1
    return start


def _pack_chunks(
    doc: _Document, atoms: list[Block], opts: ChunkingOptions, index: int = 0, start: int = -1
) -> list[tuple[int, int, int]]:
    """Greedy packing of whole atoms into chunks of at most ``chunk_tokens`` (when possible):
    each chunk's first and last line and the index of its last atom. ``index``, ``start``:
    resume with atom ``index`` in a chunk that starts at line ``start``."""
    chunks: list[tuple[int, int, int]] = []
    if start < 0:
        start = atoms[0].start if atoms else 0
    while index < len(atoms):
        end = atoms[index].end
        index += 1
        while index < len(atoms) and doc.tokens(start, atoms[index].end) <= opts.chunk_tokens:
            section = atoms[index].kind == "heading"
            if section and doc.tokens(start, end) * 2 >= opts.chunk_tokens:
                break
            end = atoms[index].end
            index += 1
        chunks.append((start, end, index - 1))
        if index < len(atoms):
            nxt = atoms[index]
            fresh = nxt.kind == "heading" or opts.overlap_tokens == 0
            start = nxt.start if fresh else _overlap_start(doc, (start, end), nxt, opts)
    return chunks


def chunk_markdown(text: str, options: ChunkingOptions | None = None) -> list[Span]:
    """All chunk spans, then all block spans, of one markdown document."""
    return plan_chunks(text, options or ChunkingOptions()).spans()


@dataclass(frozen=True)
class ChunkPlan:
    """How one text was cut, kept so that the text with lines added at its end is cut
    again from where the new lines can change the cut (``plan_chunks``), not from line 1.

    ``chunks`` are (first line, last line, index of the last atom), 0-based; ``blocks``
    come with the heading stack after each and ``atoms`` with the block each is cut from.
    """

    text: str
    options: ChunkingOptions
    doc: _Document
    blocks: list[Block]
    stacks: list[HeadingStack]
    atoms: list[Block]
    atom_blocks: list[int]
    headings: list[tuple[str, ...]]
    chunks: list[tuple[int, int, int]]
    chunk_spans: list[Span]
    block_spans: list[Span]
    kept_chunks: int = 0  # how many chunk spans (and below, block spans) a resume kept
    kept_blocks: int = 0

    def spans(self) -> list[Span]:
        """All chunk spans, then all block spans, as ``chunk_markdown`` returns them."""
        return [*self.chunk_spans, *self.block_spans]


def plan_chunks(
    text: str, options: ChunkingOptions, previous: ChunkPlan | None = None
) -> ChunkPlan:
    """Cut ``text`` into chunk and block spans; the spans equal ``chunk_markdown``'s.

    With ``previous``, the plan of a text that ``text`` starts with (an appended note),
    only the tail is cut again: the blocks whose end the kept lines settle
    (``markdown.block_is_final``), their atoms and the chunks that end before the first
    atom that may change are taken as they were, and the scan and the packing resume
    right after them. Any other ``previous`` is ignored (the whole text is cut).
    """
    if previous is not None and previous.options == options and text.startswith(previous.text):
        resumed = _resume(text, options, previous)
        if resumed is not None:
            return resumed
    doc = _Document([strip_markers(line) for line in split_lines(text)])
    blocks, stacks = scan_blocks_from(doc.lines, 0, ())
    return _finish(text, options, doc, blocks, stacks)


def _resume(text: str, opts: ChunkingOptions, old: ChunkPlan) -> ChunkPlan | None:
    """``plan_chunks`` of ``text`` from ``old``, the plan of a text ``text`` starts with;
    None when nothing of it can be kept."""
    kept = old.text.count("\n")  # lines ended in the old text: the same in ``text``
    if kept == 0 or open_front_matter(old.doc.lines):
        return None
    tail = split_lines(text[old.text.rfind("\n") + 1 :])
    doc = old.doc.extended(kept, [strip_markers(line) for line in tail])
    final = len(old.blocks)  # blocks the kept lines settle: all up to the first that is not
    while final > 0 and not block_is_final(doc.lines, old.blocks[final - 1], kept):
        final -= 1  # (block ends grow, and only the last block can be a fence left open)
    if final == 0:
        return None
    after = old.blocks[final - 1].end + 1
    blocks, stacks = scan_blocks_from(doc.lines, after, old.stacks[final - 1])
    return _finish(text, opts, doc, old.blocks[:final] + blocks, old.stacks[:final] + stacks,
                   old, final)  # fmt: skip


def _finish(
    text: str,
    opts: ChunkingOptions,
    doc: _Document,
    blocks: list[Block],
    stacks: list[HeadingStack],
    old: ChunkPlan | None = None,
    final: int = 0,
) -> ChunkPlan:
    """The plan of ``text`` from its ``blocks``; the first ``final`` of them are ``old``'s,
    and so are their atoms, the headings of their lines and the chunks those settle."""
    atoms_kept = 0
    chunks_kept = 0
    atoms: list[Block] = []
    atom_blocks: list[int] = []
    headings: list[tuple[str, ...]] = []
    current: tuple[str, ...] = ()
    if old is not None and final:
        atoms_kept = bisect_left(old.atom_blocks, final)
        # a chunk is settled when the atom after it (which ended it) is kept
        chunks_kept = bisect_left(old.chunks, atoms_kept - 1, key=lambda chunk: chunk[2])
        atoms, atom_blocks = old.atoms[:atoms_kept], old.atom_blocks[:atoms_kept]  # copies
        headings = old.headings[: blocks[final - 1].end + 1]
        current = _stack_path(stacks[final - 1])
    for number in range(final, len(blocks)):
        pieces = _split_block(doc, blocks[number], opts)
        atoms.extend(pieces)
        atom_blocks.extend([number] * len(pieces))
    headings = headings + _line_headings_from(blocks[final:], len(doc.lines), len(headings),
                                              current)  # fmt: skip
    if old is not None and chunks_kept:
        index, start = old.chunks[chunks_kept - 1][2] + 1, old.chunks[chunks_kept][0]
        packed = old.chunks[:chunks_kept] + _pack_chunks(doc, atoms, opts, index, start)
    else:
        packed = _pack_chunks(doc, atoms, opts)
    blocks_kept = 0  # block spans of the kept atoms: those before the first atom cut again
    if old is not None and atoms_kept:
        first = old.atoms[atoms_kept].start if atoms_kept < len(old.atoms) else len(doc.lines)
        blocks_kept = bisect_left(old.block_spans, first + 1, key=lambda span: span.start_line)
    chunk_spans = [] if old is None else old.chunk_spans[:chunks_kept]
    chunk_spans = chunk_spans + [
        doc.span("chunk", start, end, headings[start]) for start, end, _ in packed[chunks_kept:]
    ]
    block_spans = [] if old is None else old.block_spans[:blocks_kept]
    block_spans = block_spans + [
        doc.span("block", atom.start, atom.end, atom.heading_path)
        for atom in atoms[atoms_kept:]
        if atom.kind not in _NOT_BLOCKS
    ]
    return ChunkPlan(
        text, opts, doc, blocks, stacks, atoms, atom_blocks, headings, packed,
        chunk_spans, block_spans, chunks_kept, blocks_kept,
    )  # fmt: skip


def _stack_path(stack: HeadingStack) -> tuple[str, ...]:
    return tuple(title for _, title in stack)


def _line_headings_from(
    blocks: list[Block], line_count: int, cursor: int, current: tuple[str, ...]
) -> list[tuple[str, ...]]:
    """The heading path in effect at every line from ``cursor`` on, the blocks from there
    on given, ``current`` the path in effect before them."""
    base = cursor
    paths: list[tuple[str, ...]] = [()] * (line_count - base)
    for block in blocks:
        for index in range(cursor, block.start):
            paths[index - base] = current
        if block.kind == "heading":
            current = block.heading_path
        for index in range(block.start, block.end + 1):
            paths[index - base] = current if block.kind == "heading" else block.heading_path
        cursor = block.end + 1
    for index in range(cursor, line_count):
        paths[index - base] = current
    return paths
