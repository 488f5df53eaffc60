"""The contracts of the store: the values that cross it and the protocols callers hold.

``store/`` is the only place SQL lives. ``search/`` reads the index through
``IndexReader``; ``index/`` writes it through ``IndexWriter``; ``facts/`` keeps the
structured facts through ``FactStore`` (its values are in ``fact_records``). Each
backend implements all three: ``sqlite/`` (the embedded default) and ``postgres/``
(the scale-out); ``open.py`` chooses one.

Units are rows of one table with a ``kind``: ``chunk`` (about 400 tokens with overlap,
for recall and context) and ``block`` (one markdown block: a list item, a paragraph, a
short heading section; for snippets as short as answers need). Every unit is keyword
indexed and, when an embedder is configured, embedded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memdir.store.fact_records import Fact, FactEvent, FactFilter, FactStamp, RetiredLine

UnitKind = Literal["chunk", "block"]
UNIT_KINDS: tuple[UnitKind, ...] = ("chunk", "block")
"""Every unit kind; a kind's position here is its code wherever a number stands for it."""

Vector = npt.NDArray[np.float32]
FileKey = tuple[str, str]  # (source, path)


@dataclass(frozen=True)
class EmbedderIdentity:
    """Who made the vectors in an index: a mismatch means ``memdir index rebuild``."""

    provider: str
    model: str
    dimensions: int

    @classmethod
    def from_meta(
        cls, meta: Mapping[str, str], prefix: str = "identity_"
    ) -> EmbedderIdentity | None:
        """The identity a meta table records (``<prefix>provider``, ``<prefix>model``,
        ``<prefix>dimensions``; the index's keys by default), or None before the first bind."""
        if f"{prefix}provider" not in meta:
            return None
        return cls(meta[f"{prefix}provider"], meta[f"{prefix}model"],
                   int(meta[f"{prefix}dimensions"]))  # fmt: skip


@dataclass(frozen=True)
class Unit:
    """A searchable span of one file: 1-based inclusive line range.

    ``source`` names its workspace (``global`` or ``agent:<id>``); ``path`` is posix,
    relative to that workspace's root.
    """

    source: str
    path: str
    kind: UnitKind
    start_line: int
    end_line: int
    text: str
    heading_path: tuple[str, ...] = ()
    sha256: str = ""  # hash of the text that was embedded: the embedding cache's key
    id: int = 0  # assigned by the store
    file_mtime: float = 0.0


@dataclass(frozen=True)
class ScoredId:
    """A unit id with a raw signal score (higher is better after normalisation by search)."""

    unit_id: int
    score: float


@dataclass(frozen=True)
class KeywordQuery:
    """What a keyword search asks for: any of ``terms``, each one word of the query.

    The store tokenises each term with the index's own tokenizer (stemming, trigrams)
    and ranks units by BM25 over the OR of the tokens; a term the tokenizer splits
    (``foo_bar``, a long word in a trigram index) counts as each of its tokens, and a
    term given twice counts twice. No query syntax: any text is a valid term.
    """

    terms: tuple[str, ...]

    def __bool__(self) -> bool:
        return any(term.strip() for term in self.terms)


Around = tuple[tuple[int, ...], tuple[int, ...]]
"""The blocks before and after a block, by id, nearest first (``IndexReader.blocks_around``)."""


@dataclass(frozen=True)
class IndexStats:
    files: int
    chunks: int
    blocks: int
    vectors: int
    cached_embeddings: int
    identity: EmbedderIdentity | None
    vector_backend: str  # "numpy" (SQLite), "pgvector-exact" or "pgvector-hnsw"
    db_path: str
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class FileStamp:
    """What the index knows about one file: content hash and the stat it was read with."""

    source: str
    path: str
    sha256: str
    size: int
    mtime_ns: int

    @property
    def key(self) -> FileKey:
        return (self.source, self.path)

    @property
    def mtime(self) -> float:
        return self.mtime_ns / 1e9


@dataclass(frozen=True)
class FileWrite:
    """A file's new content: its stamp, units, and one vector per unit (or None)."""

    stamp: FileStamp
    units: Sequence[Unit]
    vectors: Vector | None = None


@dataclass(frozen=True)
class FileTail:
    """What a ``FileWrite`` of the end of a file replaces (lines were added at its end):
    the file's chunks from line ``chunks_from`` on and its blocks from line ``blocks_from``
    on; the units before stay as they are. Only over the units of the text hashed
    ``base_sha256`` (the file as the index holds it): else the whole file is written."""

    base_sha256: str
    chunks_from: int
    blocks_from: int


@runtime_checkable
class TailWriter(Protocol):
    """An index that rewrites just the end of a file (``FileTail``)."""

    def write_tail(
        self, item: FileWrite, tail: FileTail, identity: EmbedderIdentity | None = None
    ) -> bool:
        """Write ``item`` (the units from the tail's lines on) over the file's rows when
        the file is indexed as ``tail.base_sha256``; False (nothing written) if not."""
        ...


class IndexReader(Protocol):
    """What ``search/`` reads from an index."""

    def keyword_search(
        self, query: KeywordQuery, sources: Sequence[str], kinds: Sequence[UnitKind], limit: int
    ) -> dict[UnitKind, list[ScoredId]]:
        """The best ``limit`` units of each kind by BM25 (a key per distinct kind).

        ``score`` is >= 0, higher is better; ties go to the lower unit id.
        """
        ...

    def keyword_coverage(
        self, query: KeywordQuery, unit_ids: Sequence[int]
    ) -> dict[int, float] | None:
        """For each unit, the share in [0, 1] of the query's information it holds (its
        tokens' idf over all of the query's), or None when the store cannot measure it."""
        ...

    def vector_search(
        self, query: Vector, sources: Sequence[str], kind: UnitKind, limit: int
    ) -> list[ScoredId]:
        """Nearest units by cosine similarity; ``score`` is the cosine in [-1, 1]."""
        ...

    def get_units(self, ids: Iterable[int]) -> dict[int, Unit]:
        """Fetch units by id (missing ids are absent from the result)."""
        ...

    def blocks_around(self, ids: Sequence[int], reach: int) -> dict[int, Around]:
        """For each block of ``ids``: the ids of up to ``reach`` blocks of its file before it
        and after it, by line, nearest first (none for a unit that is not a block)."""
        ...

    def get_vectors(self, ids: Iterable[int]) -> dict[int, Vector]:
        """Stored unit vectors by id, for MMR and re-ranking."""
        ...

    def count_files(self, sources: Sequence[str]) -> int:
        """How many files of these sources hold something to search (at least one unit;
        to explain empty results)."""
        ...


class IndexWriter(IndexReader, Protocol):
    """Everything sync, rebuild and status need from an index.

    Larger than the reader because an incremental sync is one conversation with the
    store: read the stamps, move renamed files, write changed ones with cached vectors,
    delete the gone ones. Splitting it would only scatter one job.
    """

    @property
    def identity(self) -> EmbedderIdentity | None: ...

    @property
    def tokenizer(self) -> str: ...

    def bind_identity(self, identity: EmbedderIdentity) -> None: ...

    def file_stamps(self, sources: Sequence[str]) -> dict[FileKey, FileStamp]: ...

    def write_files(
        self, writes: Sequence[FileWrite], identity: EmbedderIdentity | None = None
    ) -> int: ...

    def move_files(self, moves: Sequence[tuple[FileKey, FileStamp]]) -> list[FileKey]: ...

    def delete_files(self, keys: Sequence[FileKey]) -> None: ...

    def update_stamps(self, stamps: Sequence[FileStamp]) -> None: ...

    def files_missing_vectors(self, sources: Sequence[str]) -> set[FileKey]: ...

    def mark_vectors_complete(self, sources: Sequence[str]) -> None: ...

    def optimize(self, progress: Callable[[str], None] | None = None) -> list[str]:
        """Bring what the store derives from its tables for fast searches up to date
        after a sync (may take minutes on a large index); returns what was rebuilt."""
        ...

    def cached_vectors(
        self, identity: EmbedderIdentity, hashes: Iterable[str]
    ) -> dict[str, Vector]: ...

    def clear(self, *, keep_cache: bool = True, tokenizer: str | None = None) -> None: ...

    def stats(self) -> IndexStats: ...

    def close(self) -> None: ...


# -- facts ----------------------------------------------------------------------------------

VectorsById = dict[str, tuple[str, Vector]]
"""Fact id -> (sha256 of the embedded text, vector)."""


class FactNoteLog(Protocol):
    """The parsed marker lines of the daily notes, per file (for incremental replay)."""

    def file_stamps(self) -> dict[str, FactStamp]: ...

    def event_paths(self) -> set[str]: ...

    def replace_file_events(
        self, changed: Sequence[tuple[FactStamp, Sequence[FactEvent]]], removed: Sequence[str]
    ) -> None: ...

    def all_events(self, path: str | None = None) -> list[FactEvent]: ...


class FactQueries(Protocol):
    """Reading facts: by id, by filter, by keywords and by vector; and which note lines
    hold facts that are no longer current (search leaves those out)."""

    def get_facts(self, ids: Iterable[str]) -> dict[str, Fact]: ...

    def list_facts(self, filt: FactFilter) -> list[Fact]: ...

    def keyword_search(
        self, query: KeywordQuery, filt: FactFilter, limit: int
    ) -> list[tuple[str, float]]: ...

    def vector_search(
        self, query: Vector, filt: FactFilter, limit: int
    ) -> list[tuple[str, float]]: ...

    def vector_shas(self) -> dict[str, str]: ...

    def count_unembedded(self) -> int: ...

    def retired_lines(
        self, sources: Sequence[str], paths: Sequence[str] | None = None
    ) -> list[RetiredLine]: ...


class FactWrites(Protocol):
    """Changing facts: one atomic ``apply``, access statistics, a clear before a rebuild.

    ``transaction()`` holds the scope's write lock across several calls: every
    call inside the block runs in one transaction, other writers of the scope
    (threads, processes, hosts) wait for it, and an exception undoes all of it.
    A sync of the notes and a save each run in one, so neither can undo the other.
    """

    def transaction(self) -> AbstractContextManager[None]: ...

    def apply(
        self,
        events: Sequence[FactEvent] = (),
        upserts: Sequence[Fact] = (),
        deletes: Sequence[str] = (),
        vectors: VectorsById | None = None,
        stamps: Sequence[FactStamp] = (),
    ) -> None: ...

    def record_access(self, ids: Sequence[str], when: datetime) -> None: ...

    def clear(self) -> None: ...


class FactStore(FactNoteLog, FactQueries, FactWrites, Protocol):
    """A facts store of one scope (``global`` or ``agent:<id>``): notes log, queries,
    writes and the embedder identity.

    ``path`` names where the facts live, for messages (a file, or a DSN without
    its password); ``identity`` is the embedder of the stored vectors, if any.
    """

    @property
    def path(self) -> str | os.PathLike[str]: ...

    @property
    def source(self) -> str: ...

    @property
    def identity(self) -> EmbedderIdentity | None: ...

    def bind_identity(self, identity: EmbedderIdentity) -> None: ...

    def close(self) -> None: ...
