"""Writer processes of the store benchmark: generated notes into one store, in batches.

Each writer opens its own store (SQLite file or PostgreSQL schema, named by a
``Target``), takes every ``writers``-th note of a deterministic stream of daily
notes (``memdir.bench.notes``), chunks it like ``memdir index sync`` does, gives
every unit a hash vector and writes 100 files per ``write_files`` transaction,
as sync does, until it has written its share of units. It reports what it
wrote as JSON in a file the parent names, so the parent can check the store
holds exactly that.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memdir.bench.notes import render_note
from memdir.embeddings.base import HashEmbedder, Vectors
from memdir.index import ChunkingOptions, embedding_text
from memdir.index.sync import identity_of
from memdir.index.units import units_of
from memdir.store import FileStamp, FileWrite, SqliteStore

StoreName = Literal["sqlite", "postgres"]
SOURCE = "global"
FILES_PER_WRITE = 100  # SyncOptions.write_batch_files
NOTES_PER_DAY = 10  # keeps a million units of notes between 2015 and 2022
FIRST_DAY = date(2015, 1, 1)
_WORD = re.compile(r"\w+", re.UNICODE)  # the tokens of HashEmbedder


@dataclass(frozen=True)
class Target:
    """Where a writer writes: a SQLite file, or a schema of a PostgreSQL database."""

    store: StoreName
    sqlite_path: str = ""
    dsn: str = ""
    schema: str = ""


def open_target(target: Target, *, hnsw: bool = False) -> Any:
    """Open the target's store (``hnsw`` builds and uses PostgreSQL's HNSW index)."""
    if target.store == "sqlite":
        return SqliteStore.open(target.sqlite_path)
    from memdir.store.postgres import PostgresStore

    index: Literal["exact", "hnsw"] = "hnsw" if hnsw else "exact"
    return PostgresStore.open(target.dsn, schema=target.schema, vector_index=index)


class BulkHashEmbedder(HashEmbedder):
    """``HashEmbedder``'s vectors, made faster for big batches by caching each word's slot."""

    def __init__(self, dimensions: int = 64) -> None:
        super().__init__(dimensions)
        self._slots: dict[str, tuple[int, float]] = {}

    def _slot(self, word: str) -> tuple[int, float]:
        slot = self._slots.get(word)
        if slot is None:
            value = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(),
                                   "little")  # fmt: skip
            slot = (value % self.dimensions, 1.0 if (value >> 63) & 1 else -1.0)
            if len(self._slots) < 1_000_000:
                self._slots[word] = slot
        return slot

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        rows: list[int] = []
        cols: list[int] = []
        signs: list[float] = []
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                col, sign = self._slot(word)
                rows.append(row)
                cols.append(col)
                signs.append(sign)
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        np.add.at(out, (np.array(rows, dtype=np.intp), np.array(cols, dtype=np.intp)),
                  np.array(signs, dtype=np.float32))  # fmt: skip
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def note_file(number: int) -> tuple[str, str]:
    """Path and text of the ``number``-th generated daily note (seeded by its number)."""
    day = FIRST_DAY + timedelta(days=number // NOTES_PER_DAY)
    path = f"memory/{day.year}/{day.isoformat()}-{number % NOTES_PER_DAY + 1}.md"
    return path, render_note(day, random.Random(number))


@dataclass
class WriterReport:
    """What one writer process wrote and where its time went."""

    worker: int
    files: int = 0
    units: int = 0
    chunks: int = 0
    blocks: int = 0
    prepare_s: float = 0.0  # generating, chunking and hashing notes
    store_s: float = 0.0  # inside write_files


class _Batches:
    def __init__(self, store: Any, embedder: BulkHashEmbedder, report: WriterReport) -> None:
        self.store, self.embedder, self.report = store, embedder, report
        self.identity = identity_of(embedder)
        self.options = ChunkingOptions()
        self.files: list[tuple[FileStamp, list[Any]]] = []
        self.queued = 0  # units generated so far, written or waiting for the next flush

    def add(self, number: int) -> int:
        started = time.perf_counter()
        path, text = note_file(number)
        data = text.encode("utf-8")
        stamp = FileStamp(SOURCE, path, hashlib.sha256(data).hexdigest(), len(data),
                          1_700_000_000_000_000_000 + number)  # fmt: skip
        units = units_of(SOURCE, path, text, self.options)
        self.files.append((stamp, units))
        self.queued += len(units)
        self.report.files += 1
        self.report.chunks += sum(1 for u in units if u.kind == "chunk")
        self.report.blocks += sum(1 for u in units if u.kind == "block")
        self.report.prepare_s += time.perf_counter() - started
        if len(self.files) >= FILES_PER_WRITE:
            return self.flush()
        return 0

    def flush(self) -> int:
        if not self.files:
            return 0
        started = time.perf_counter()
        texts = [
            embedding_text(u.kind, u.heading_path, u.text) for _, units in self.files for u in units
        ]
        vectors = self.embedder.embed_documents(texts)
        writes, at = [], 0
        for stamp, units in self.files:
            writes.append(FileWrite(stamp, units, vectors[at : at + len(units)]))
            at += len(units)
        written = time.perf_counter()
        count = int(self.store.write_files(writes, identity=self.identity))
        done = time.perf_counter()
        self.report.prepare_s += written - started
        self.report.store_s += done - written
        self.report.units += count
        self.files = []
        return count


def write_share(
    target: Target,
    worker: int,
    writers: int,
    share: int,
    dims: int,
    report_path: str,
    ready: Any = None,
    counter: Any = None,
) -> None:
    """Process entry point: write notes ``worker, worker + writers, ...`` until ``share`` units.

    ``ready`` (a barrier) is passed once the store is open, so the parent times the
    writes only; ``counter`` (a shared integer) adds the units of each transaction.
    """
    store = open_target(target)
    report = WriterReport(worker)
    batches = _Batches(store, BulkHashEmbedder(dims), report)
    try:
        if ready is not None:
            ready.wait()
        number = worker
        while batches.queued < share:
            _add(counter, batches.add(number))
            number += writers
        _add(counter, batches.flush())
    finally:
        store.close()
    Path(report_path).write_text(json.dumps(asdict(report)), encoding="utf-8")


def _add(counter: Any, count: int) -> None:
    if counter is not None and count:
        with counter.get_lock():
            counter.value += count
