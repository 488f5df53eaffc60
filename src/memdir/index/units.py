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
from dataclasses import dataclass

from memdir.index.chunking import ChunkingOptions, ChunkPlan, Span, plan_chunks, text_sha256
from memdir.store.contracts import Unit
from memdir.workspace.seeding import blank_seeded_lines

MAX_PLANS = 16  # files whose last cut a process keeps (a few notes are appended at once)


@dataclass(frozen=True)
class _Cut:
    plan: ChunkPlan
    chunks: list[Unit]
    blocks: list[Unit]


_cuts: OrderedDict[tuple[str, str], _Cut] = OrderedDict()
_lock = threading.Lock()


def units_of(source: str, path: str, text: str, options: ChunkingOptions) -> list[Unit]:
    """Chunk and block units of one file, each with the hash of its embedding text.

    In a file memdir seeds from a template (USER.md, TOOLS.md, SOUL.md, ...) the template's
    lines are left out (``workspace.seeding.blank_seeded_lines``) and only blocks are kept:
    a chunk would span the left-out lines, and a hit must quote the file as it is.
    """
    blanked = blank_seeded_lines(path, text)
    if blanked is not text:
        spans = plan_chunks(blanked, options).block_spans
        return [_unit(source, path, span) for span in spans]
    key = (source, path)
    with _lock:
        last = _cuts.get(key)
    plan = plan_chunks(text, options, None if last is None else last.plan)
    kept_chunks = last.chunks[: plan.kept_chunks] if last is not None else []
    kept_blocks = last.blocks[: plan.kept_blocks] if last is not None else []
    cut = _Cut(
        plan,
        kept_chunks + [_unit(source, path, s) for s in plan.chunk_spans[plan.kept_chunks :]],
        kept_blocks + [_unit(source, path, s) for s in plan.block_spans[plan.kept_blocks :]],
    )
    with _lock:
        _cuts[key] = cut
        _cuts.move_to_end(key)
        while len(_cuts) > MAX_PLANS:
            _cuts.popitem(last=False)
    return [*cut.chunks, *cut.blocks]


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
