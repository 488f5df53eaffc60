"""The units of one file: its chunks and blocks, each with the hash of its embedding text.

A daily note grows by appends all day, and every append re-indexes it; so the last cut of
each file (its ``ChunkPlan`` and units) is kept in the process, and a text that starts
with the text cut last is cut again only from where the added lines can change the cut
(``chunking.plan_chunks``): the work of an append does not grow with the note. The cut
is a function of the text alone, so a plan kept here is never stale, only unused when
the file changed otherwise (an edit, another process's rewrite).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from memdir.index.chunking import ChunkingOptions, ChunkPlan, Span, plan_chunks, text_sha256
from memdir.store.contracts import Unit
from memdir.workspace.seeding import blank_seeded_lines

MAX_KEPT_CHARS = 4_000_000
"""Characters of text whose cuts a process keeps, the files cut last first: a cut holds
about ten times its text in memory (lines, blocks, units), so some 40 MB at most; a daily
note of a thousand 3-line entries is about 190,000 characters (1.9 MB kept)."""


@dataclass(frozen=True)
class _Cut:
    plan: ChunkPlan
    chunks: list[Unit]
    blocks: list[Unit]
    sha256: str = ""  # of the file's bytes, when the caller knew it


NO_LINE = 2**31 - 1  # a tail that holds no chunk (or no block) starts here


@dataclass(frozen=True)
class FileCut:
    """The units of a file, and how they differ from the file's last cut in this process.

    ``base`` is the sha256 of the file that last cut was of (None: the file was cut whole);
    the units of the chunks from line ``chunks_from`` on and of the blocks from line
    ``blocks_from`` on are ``tail``, in that cut and in this one alike, and the units
    before are the same in both. ``context``: the blocks before the tail that its chunks
    hold lines of (a chunk's vector is derived from its blocks')."""

    units: list[Unit]
    base: str | None = None
    tail: list[Unit] = field(default_factory=list)
    chunks_from: int = NO_LINE
    blocks_from: int = NO_LINE
    context: list[Unit] = field(default_factory=list)


_cuts: OrderedDict[tuple[str, str], _Cut] = OrderedDict()  # the file cut last comes last
_kept_chars = 0
_lock = threading.Lock()


def units_of(source: str, path: str, text: str, options: ChunkingOptions) -> list[Unit]:
    """Chunk and block units of one file, each with the hash of its embedding text.

    In a file memdir seeds from a template (USER.md, TOOLS.md, SOUL.md, ...) the template's
    lines are left out (``workspace.seeding.blank_seeded_lines``) and only blocks are kept:
    a chunk would span the left-out lines, and a hit must quote the file as it is.
    """
    return cut_file(source, path, text, "", options).units


def cut_file(source: str, path: str, text: str, sha256: str, options: ChunkingOptions) -> FileCut:
    """``units_of`` the file whose bytes hash to ``sha256`` (its ``text``), with what
    changed since its last cut in this process (``FileCut``)."""
    blanked = blank_seeded_lines(path, text)
    if blanked is not text:
        spans = plan_chunks(blanked, options).block_spans
        return FileCut([_unit(source, path, span) for span in spans])
    key = (source, path)
    with _lock:
        last = _cuts.get(key)
    plan = plan_chunks(text, options, None if last is None else last.plan)
    cut = _Cut(plan, [], [], sha256)
    if last is not None:
        cut.chunks.extend(last.chunks[: plan.kept_chunks])
        cut.blocks.extend(last.blocks[: plan.kept_blocks])
    cut.chunks.extend(_unit(source, path, s) for s in plan.chunk_spans[plan.kept_chunks :])
    cut.blocks.extend(_unit(source, path, s) for s in plan.block_spans[plan.kept_blocks :])
    _keep(key, cut)
    units = [*cut.chunks, *cut.blocks]
    if last is None or not last.sha256 or not (plan.kept_chunks or plan.kept_blocks):
        return FileCut(units)
    chunks, blocks = cut.chunks[plan.kept_chunks :], cut.blocks[plan.kept_blocks :]
    old_chunks, old_blocks = last.chunks[plan.kept_chunks :], last.blocks[plan.kept_blocks :]
    chunks_from = min((u.start_line for u in [*chunks, *old_chunks]), default=NO_LINE)
    blocks_from = min((u.start_line for u in [*blocks, *old_blocks]), default=NO_LINE)
    first = plan.kept_blocks  # the kept blocks the tail's chunks hold lines of
    while first > 0 and cut.blocks[first - 1].end_line >= chunks_from:
        first -= 1
    context = cut.blocks[first : plan.kept_blocks]
    return FileCut(units, last.sha256, [*chunks, *blocks], chunks_from, blocks_from, context)


def _keep(key: tuple[str, str], cut: _Cut) -> None:
    """Keep ``cut`` as the last of its file, within ``MAX_KEPT_CHARS``."""
    global _kept_chars
    with _lock:
        gone = _cuts.pop(key, None)
        _kept_chars -= 0 if gone is None else len(gone.plan.text)
        if len(cut.plan.text) > MAX_KEPT_CHARS:
            return
        _cuts[key] = cut
        _kept_chars += len(cut.plan.text)
        while _kept_chars > MAX_KEPT_CHARS:
            _, oldest = _cuts.popitem(last=False)
            _kept_chars -= len(oldest.plan.text)


def _unit(source: str, path: str, span: Span) -> Unit:
    return Unit(
        source=source,
        path=path,
        kind=span.kind,
        start_line=span.start_line,
        end_line=span.end_line,
        text=span.text,
        heading_path=span.heading_path,
        sha256=text_sha256(span.kind, span.heading_path, span.text),
    )
