"""The units of one file: its chunks and blocks, each with the hash of its embedding text."""

from __future__ import annotations

from memdir.index.chunking import ChunkingOptions, chunk_markdown, text_sha256
from memdir.store.contracts import Unit
from memdir.workspace.seeding import blank_seeded_lines


def units_of(source: str, path: str, text: str, options: ChunkingOptions) -> list[Unit]:
    """Chunk and block units of one file, each with the hash of its embedding text.

    In a file memdir seeds from a template (USER.md, TOOLS.md, SOUL.md, ...) the template's
    lines are left out (``workspace.seeding.blank_seeded_lines``) and only blocks are kept:
    a chunk would span the left-out lines, and a hit must quote the file as it is.
    """
    blanked = blank_seeded_lines(path, text)
    spans = chunk_markdown(blanked, options)
    if blanked is not text:
        spans = [span for span in spans if span.kind == "block"]
    return [
        Unit(
            source=source,
            path=path,
            kind=span.kind,
            start_line=span.start_line,
            end_line=span.end_line,
            text=span.text,
            heading_path=span.heading_path,
            sha256=text_sha256(span.kind, span.heading_path, span.text),
        )
        for span in spans
    ]
