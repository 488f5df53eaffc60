"""The facts store contract: what ``memdir.facts`` needs from a backend.

Two backends implement it: ``SqliteFactStore`` (``store/facts_sqlite.py``, the
embedded default) and ``PostgresFactStore`` (``store/postgres/facts.py``, the
scale-out). The values that cross it (``Fact``, ``FactEvent``, ``FactFilter``,
``FactStamp``) live in ``fact_records`` and are shared by both.

The contract is split into three small protocols by what the caller does (the
replay of notes, queries, writes) and joined in ``FactStore``, the type
``memdir.facts`` is annotated with. Every store reads and writes one ``scope``:
``global`` or ``agent:<id>``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from memdir.store.base import EmbedderIdentity
from memdir.store.fact_records import (
    Fact,
    FactEvent,
    FactFilter,
    FactStamp,
    RetiredLine,
    Vector,
)

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
        self, match: str, filt: FactFilter, limit: int
    ) -> list[tuple[str, float]]: ...

    def vector_search(
        self, query: Vector, filt: FactFilter, limit: int
    ) -> list[tuple[str, float]]: ...

    def vector_shas(self) -> dict[str, str]: ...

    def count_unembedded(self) -> int: ...

    def retired_lines(
        self, scopes: Sequence[str], paths: Sequence[str] | None = None
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
    """A facts store of one scope: notes log, queries, writes and the embedder identity.

    ``path`` names where the facts live, for messages (a file, or a DSN without
    its password); ``identity`` is the embedder of the stored vectors, if any.
    """

    @property
    def path(self) -> str | os.PathLike[str]: ...

    @property
    def scope(self) -> str: ...

    @property
    def identity(self) -> EmbedderIdentity | None: ...

    def bind_identity(self, identity: EmbedderIdentity) -> None: ...

    def close(self) -> None: ...
