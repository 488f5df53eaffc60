"""Chunk vectors derived from the vectors of the blocks a chunk holds.

A chunk (about 400 tokens) is not embedded: the bundled model mean-pools its token vectors
and reads at most 256 word pieces, so a chunk embedded whole was read in part, and chunks
were about half of the model's work in an index. Its blocks cover all of it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from memdir.store.contracts import Unit

Vector = npt.NDArray[np.float32]


def chunk_vector(
    chunk: Unit, blocks: list[tuple[Unit, npt.NDArray[np.float32]]]
) -> npt.NDArray[np.float32] | None:
    """A chunk's vector: the mean of the vectors of the blocks it holds, each weighted by
    the characters of its lines inside the chunk, normalised (None when it holds none).

    The bundled model mean-pools its token vectors too, and truncates its input at 256
    word pieces, so a 400-token chunk embedded whole was read in part; its blocks cover all
    of it, and embedding them alone halves the work of an index (docs/benchmarks.md).
    """
    total: npt.NDArray[np.float32] | None = None
    for block, vector in blocks:
        lines = block.text.split("\n")
        first = max(chunk.start_line, block.start_line) - block.start_line
        last = min(chunk.end_line, block.end_line) - block.start_line
        weight = float(sum(len(line) + 1 for line in lines[first : last + 1]))
        if weight <= 0.0:
            continue
        part = weight * np.asarray(vector, dtype=np.float32)
        total = part if total is None else total + part
    if total is None:
        return None
    norm = float(np.linalg.norm(total))
    return (total / norm).astype(np.float32) if norm > 0.0 else None


def derive_chunk_vectors(
    chunks: list[Unit], units: list[Unit], found: dict[str, Vector]
) -> tuple[dict[str, Vector], list[Unit]]:
    """The vectors of ``chunks`` by hash, from the vectors (``found``, by hash) of the
    blocks among ``units`` that they hold, and the chunks that hold none."""
    by_file: dict[tuple[str, str], list[Unit]] = {}
    for unit in units:
        if unit.kind == "block":
            by_file.setdefault((unit.source, unit.path), []).append(unit)
    for blocks in by_file.values():  # in line order, whatever order ``units`` came in:
        blocks.sort(key=lambda block: block.start_line)  # the sum is the same to the bit
    out: dict[str, Vector] = {}
    alone: list[Unit] = []
    for chunk in chunks:
        inside = [
            (block, found[block.sha256])
            for block in by_file.get((chunk.source, chunk.path), [])
            if block.sha256 in found
            and block.start_line <= chunk.end_line
            and chunk.start_line <= block.end_line
        ]
        vector = chunk_vector(chunk, inside)
        if vector is None:
            alone.append(chunk)
        else:
            out[chunk.sha256] = vector
    return out, alone
