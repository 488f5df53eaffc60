"""Contracts of the index store: the values that cross it and the protocol search uses.

The store is the only place SQL lives. ``index/`` writes through ``IndexStore``;
``search/`` reads through it. Units are rows of one table with a ``kind``:
``chunk`` (about 400 tokens with overlap, for recall and context) and ``block``
(one markdown block: a list item, a paragraph, a short heading section; for
snippets as short as answers need). Every unit is full-text indexed and, when an
embedder is configured, embedded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

UnitKind = Literal["chunk", "block"]


@dataclass(frozen=True)
class EmbedderIdentity:
    """Who made the vectors in an index: a mismatch means ``memdir index rebuild``."""

    provider: str
    model: str
    dimensions: int


@dataclass(frozen=True)
class FileRecord:
    """One indexed file. ``source`` names its workspace: ``global`` or ``agent:<id>``."""

    source: str
    path: str  # posix path relative to its workspace root, e.g. "memory/2024-01-02.md"
    sha256: str
    size: int
    mtime: float


@dataclass(frozen=True)
class Unit:
    """A searchable span of one file: 1-based inclusive line range."""

    source: str
    path: str
    kind: UnitKind
    start_line: int
    end_line: int
    text: str
    heading_path: tuple[str, ...] = ()
    sha256: str = ""  # hash of the text that was embedded (heading path + text)
    id: int = 0  # assigned by the store
    file_mtime: float = 0.0


@dataclass(frozen=True)
class ScoredId:
    """A unit id with a raw signal score (higher is better after normalisation by search)."""

    unit_id: int
    score: float


@dataclass(frozen=True)
class IndexStats:
    files: int
    chunks: int
    blocks: int
    vectors: int
    cached_embeddings: int
    identity: EmbedderIdentity | None
    vector_backend: str  # "sqlite-vec" or "numpy"
    db_path: str
    extra: dict[str, object] = field(default_factory=dict)


class IndexStore(Protocol):
    """What ``search/`` needs from a store. Writers use the concrete store's methods."""

    def keyword_search(
        self, match_expression: str, sources: Sequence[str], kind: UnitKind, limit: int
    ) -> list[ScoredId]:
        """FTS over units; ``score`` is ``-bm25()`` (so higher is better, >= 0)."""
        ...

    def keyword_search_kinds(
        self,
        match_expression: str,
        sources: Sequence[str],
        kinds: Sequence[UnitKind],
        limit: int,
    ) -> dict[UnitKind, list[ScoredId]]:
        """``keyword_search`` for several kinds in one full-text pass: a key per kind.

        Each list is exactly what ``keyword_search`` returns for that kind alone.
        """
        ...

    def keyword_coverage(
        self, match_expression: str, unit_ids: Sequence[int]
    ) -> dict[int, float] | None:
        """For each unit, the share in [0, 1] of the query's information it holds (its
        phrases' idf over all of the query's), or None when the store cannot measure it."""
        ...

    def vector_search(
        self, query: npt.NDArray[np.float32], sources: Sequence[str], kind: UnitKind, limit: int
    ) -> list[ScoredId]:
        """Nearest units by cosine similarity; ``score`` is the cosine in [-1, 1]."""
        ...

    def get_units(self, ids: Iterable[int]) -> dict[int, Unit]:
        """Fetch units by id (missing ids are absent from the result)."""
        ...

    def get_vectors(self, ids: Iterable[int]) -> dict[int, npt.NDArray[np.float32]]:
        """Stored unit vectors by id, for MMR and re-ranking."""
        ...

    def count_files(self, sources: Sequence[str]) -> int:
        """How many files the index holds for these sources (to explain empty results)."""
        ...
