"""Incremental sync of markdown files into the index store.

``sync_files`` receives the complete current set of files of some sources and
makes the index match it:

* unchanged files (same size and ``mtime_ns``, or same content hash) cost one
  ``stat`` and no SQL beyond the one query that loads the file table;
* renamed files (a new path whose hash equals a vanished path's) move their
  units without re-chunking or re-embedding;
* new and changed files are chunked; unit texts whose hash is in the embedding
  cache reuse the cached vector, the rest are embedded in batches across files;
* files of the listed sources that the index holds but ``files`` lacks are deleted.

Per-file problems (binary, not UTF-8, too large, unreadable, vanished) are the
documented error boundary: they are collected in the report and never abort.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memdir.embeddings.base import Embedder
from memdir.errors import EmbeddingError, InvalidInputError
from memdir.index.chunk_vectors import derive_chunk_vectors
from memdir.index.chunking import ChunkingOptions, embedding_text
from memdir.index.reading import FileProblem, read_markdown
from memdir.index.units import FileCut, cut_file, units_of
from memdir.progress import Progress, ProgressUpdate
from memdir.store.contracts import (
    EmbedderIdentity,
    FileKey,
    FileStamp,
    FileTail,
    FileWrite,
    IndexWriter,
    TailWriter,
    Unit,
)

log = logging.getLogger(__name__)

READING = "reading files"
EMBEDDING = "embedding"
GRAPHS = "vector graphs"


@dataclass(frozen=True)
class SourceFile:
    """One markdown file of a workspace: ``path`` is posix and relative to its root."""

    source: str
    path: str
    abs_path: Path


@dataclass(frozen=True)
class SyncOptions:
    """How files are read, chunked and embedded."""

    chunking: ChunkingOptions = field(default_factory=ChunkingOptions)
    max_file_bytes: int = 5 * 1024 * 1024
    batch_size: int = 64  # texts per embedding call, across files
    write_batch_files: int = 100  # files per write transaction

    def __post_init__(self) -> None:
        for name in ("max_file_bytes", "batch_size", "write_batch_files"):
            if getattr(self, name) < 1:
                raise InvalidInputError(f"{name} must be >= 1, got {getattr(self, name)!r}")


@dataclass
class SyncReport:
    """What a sync did. ``skipped`` lists ``(path, reason)`` of files left out.

    ``deleted`` counts files gone from disk; a file that was indexed and is now
    skipped (say, no longer UTF-8) also leaves the index but counts as skipped.
    """

    added: int = 0
    changed: int = 0
    renamed: int = 0
    deleted: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    units_written: int = 0
    embedded: int = 0
    cache_hits: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        """One line for people: what changed, what was embedded, what was skipped and why."""
        counts = (
            f"{self.added} added, {self.changed} changed, {self.renamed} renamed, "
            f"{self.deleted} deleted, {self.unchanged} unchanged"
        )
        work = f"{self.embedded} embedded, {self.cache_hits} from cache"
        line = f"{counts}; {work}; {self.seconds:.2f}s"
        for path, reason in self.skipped:
            line += f"\nskipped {path}: {reason}"
        return line


@dataclass(frozen=True)
class _Parsed:
    stamp: FileStamp
    units: list[Unit]
    is_new: bool
    cut: FileCut | None = None  # with a tail: ``units`` are the tail's (``units.cut_file``)


def identity_of(embedder: Embedder) -> EmbedderIdentity:
    """The identity an embedder leaves on the index."""
    return EmbedderIdentity(embedder.provider, embedder.model, int(embedder.dimensions))


class _Writer:
    """Collects parsed files, embeds cache misses in batches across files, writes in batches."""

    def __init__(
        self,
        store: IndexWriter,
        embedder: Embedder | None,
        options: SyncOptions,
        report: SyncReport,
        progress: Progress | None = None,
        known: Mapping[str, npt.NDArray[np.float32]] | None = None,
    ) -> None:
        self.known = known or {}  # vectors the caller computed, by embedding-text hash
        self.store = store
        self.embedder = embedder
        self.identity = identity_of(embedder) if embedder is not None else None
        self.options = options
        self.report = report
        self.progress = progress
        self.to_embed = 0  # cache misses found so far: the embedding stage's total
        self.pending: list[_Parsed] = []

    def add(self, parsed: _Parsed) -> None:
        self.pending.append(parsed)
        if len(self.pending) >= self.options.write_batch_files:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        context = [u for p in self.pending if p.cut is not None for u in p.cut.context]
        vectors = self._vectors([u for p in self.pending for u in p.units] + context)
        writes = [self._write(p, vectors) for p in self.pending if p.cut is None]
        self.report.units_written += self.store.write_files(writes, identity=self.identity)
        for parsed in self.pending:
            if parsed.cut is not None:
                self._write_tail(parsed, parsed.cut, vectors)
        for parsed in self.pending:
            if parsed.is_new:
                self.report.added += 1
            else:
                self.report.changed += 1
        self.pending = []

    def _write(
        self, parsed: _Parsed, vectors: dict[str, npt.NDArray[np.float32]] | None
    ) -> FileWrite:
        stacked = None if vectors is None else _stack(parsed.units, vectors, self.identity)
        return FileWrite(stamp=parsed.stamp, units=parsed.units, vectors=stacked)

    def _write_tail(
        self, parsed: _Parsed, cut: FileCut, vectors: dict[str, npt.NDArray[np.float32]] | None
    ) -> None:
        """Write the end of a file over its rows; if another process wrote the file since
        (its rows are not of ``cut.base``), write the whole file."""
        assert isinstance(self.store, TailWriter)
        assert cut.base is not None
        tail = FileTail(cut.base, cut.chunks_from, cut.blocks_from)
        if self.store.write_tail(self._write(parsed, vectors), tail, identity=self.identity):
            self.report.units_written += len(parsed.units)
            return
        whole = replace(parsed, units=cut.units, cut=None)
        write = self._write(whole, self._vectors(cut.units))
        self.report.units_written += self.store.write_files([write], identity=self.identity)

    def _vectors(self, units: list[Unit]) -> dict[str, npt.NDArray[np.float32]] | None:
        """Vectors by unit hash: blocks embedded (cache misses), chunks from their blocks'."""
        if self.embedder is None or self.identity is None:
            return None
        hashes = [u.sha256 for u in units]
        found = self.store.cached_vectors(self.identity, hashes)
        self.report.cache_hits += sum(1 for h in hashes if h in found)
        found.update({h: self.known[h] for h in hashes if h not in found and h in self.known})
        todo = {u.sha256: u for u in units if u.sha256 not in found}
        blocks = [h for h, u in todo.items() if u.kind == "block"]
        self.to_embed += len(blocks)
        if blocks:
            self._show_embedding()  # the stage and its total appear before the first batch
        size = self.options.batch_size
        for start in range(0, len(blocks), size):
            batch = blocks[start : start + size]
            texts = [_embedding_input(todo[h]) for h in batch]
            vectors = self.embedder.embed_documents(texts)
            _check_shape(vectors, len(texts), self.identity)
            found.update(zip(batch, np.asarray(vectors, dtype=np.float32), strict=True))
            self.report.embedded += len(batch)
            self._show_embedding()
        chunks = [u for u in todo.values() if u.kind == "chunk"]
        if chunks:
            found.update(self._chunk_vectors(chunks, units, found))
        return found

    def _chunk_vectors(
        self, chunks: list[Unit], units: list[Unit], found: dict[str, npt.NDArray[np.float32]]
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Chunk vectors from their blocks' (``chunk_vectors``); one holding none is embedded."""
        out, alone = derive_chunk_vectors(chunks, units, found)
        if alone and self.embedder is not None and self.identity is not None:
            vectors = self.embedder.embed_documents([_embedding_input(u) for u in alone])
            _check_shape(vectors, len(alone), self.identity)
            fresh = np.asarray(vectors, dtype=np.float32)
            out.update(zip((u.sha256 for u in alone), fresh, strict=True))
            self.report.embedded += len(alone)
        return out

    def _show_embedding(self) -> None:
        if self.progress is not None:
            self.progress(ProgressUpdate(EMBEDDING, self.report.embedded, self.to_embed, "units"))


def _embedding_input(unit: Unit) -> str:
    return embedding_text(unit.kind, unit.heading_path, unit.text)


def _check_shape(vectors: object, count: int, identity: EmbedderIdentity) -> None:
    shape = getattr(vectors, "shape", None)
    if shape != (count, identity.dimensions):
        raise EmbeddingError(
            f"embedder {identity.provider}/{identity.model} returned shape {shape} for "
            f"{count} texts; expected ({count}, {identity.dimensions})"
        )


def _stack(
    units: list[Unit],
    vectors: dict[str, npt.NDArray[np.float32]],
    identity: EmbedderIdentity | None,
) -> npt.NDArray[np.float32]:
    dims = identity.dimensions if identity is not None else 0
    if not units:
        return np.zeros((0, dims), dtype=np.float32)
    return np.vstack([vectors[u.sha256] for u in units]).astype(np.float32, copy=False)


def _check_sources(files: Sequence[SourceFile], sources: Sequence[str]) -> None:
    allowed = set(sources)
    for file in files:
        if file.source not in allowed:
            raise InvalidInputError(
                f"file {file.path!r} has source {file.source!r}, which is not among the synced "
                f"sources {sorted(allowed)}; pass it in `sources`"
            )


def sync_files(
    store: IndexWriter,
    embedder: Embedder | None,
    files: Sequence[SourceFile],
    *,
    sources: Sequence[str],
    options: SyncOptions | None = None,
    progress: Progress | None = None,
    optimize: bool = True,
) -> SyncReport:
    """Make the index hold exactly ``files`` for ``sources``; see the module docstring.

    Then, with ``optimize``, the store brings its vector graphs up to date (SQLite, large
    kinds only: ``IndexWriter.optimize``), which can take minutes.
    """
    started = time.perf_counter()
    opts = options or SyncOptions()
    _check_sources(files, sources)
    report = SyncReport()
    unvectored: set[FileKey] = set()  # units written keyword-only: embed them now
    if embedder is not None:
        store.bind_identity(identity_of(embedder))
        unvectored = store.files_missing_vectors(sources)
    known = store.file_stamps(sources)
    for key in unvectored & known.keys():
        known[key] = replace(known[key], sha256="", mtime_ns=-1)  # forces a rewrite
    candidates, seen, stale = _stat_files(files, known, report, progress)
    gone = {key: stamp for key, stamp in known.items() if key not in seen}
    step = _Step(done=report.unchanged + len(report.skipped), total=len(files), report=progress)
    writer = _Writer(store, embedder, opts, report, progress)
    stale += _sync_candidates(store, writer, candidates, known, gone, opts, step)
    store.delete_files([*gone, *stale])
    if embedder is not None:
        store.mark_vectors_complete(sources)
        if optimize:
            store.optimize(_graph_progress(progress))
    report.deleted = len(gone)
    report.seconds = time.perf_counter() - started
    log.info("index sync: %s", report)
    return report


def sync_paths(
    store: IndexWriter,
    embedder: Embedder | None,
    files: Sequence[SourceFile],
    *,
    options: SyncOptions | None = None,
    vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
) -> SyncReport:
    """Bring just ``files`` up to date (a listed file that no longer exists leaves the index).

    For the few files a process has just written: no walk of the workspace, no
    look at the other files of their sources, no vector graph build. ``vectors`` are
    vectors the writer computed already, by the hash of their embedding text (a saved
    fact's text is its line's block): they are not embedded again.
    """
    started = time.perf_counter()
    opts = options or SyncOptions()
    report = SyncReport()
    wanted = {(file.source, file.path) for file in files}
    sources = sorted({source for source, _ in wanted})
    if embedder is not None:
        store.bind_identity(identity_of(embedder))
    known = {key: stamp for key, stamp in store.file_stamps(sources).items() if key in wanted}
    present = [file for file in files if file.abs_path.exists()]
    candidates, seen, stale = _stat_files(present, known, report, None)
    gone = {key: stamp for key, stamp in known.items() if key not in seen}
    step = _Step(done=0, total=len(files), report=None)
    writer = _Writer(store, embedder, opts, report, None, vectors)
    stale += _sync_candidates(store, writer, candidates, known, gone, opts, step)
    store.delete_files([*gone, *stale])
    report.deleted = len(gone)
    report.seconds = time.perf_counter() - started
    return report


def _graph_progress(progress: Progress | None) -> Callable[[str], None] | None:
    """Long builds after the files (a vector graph) show as a stage without a count."""
    if progress is None:
        return None
    return lambda note: progress(ProgressUpdate(GRAPHS, 0, None, "", note))


def _stat_files(
    files: Sequence[SourceFile],
    known: dict[FileKey, FileStamp],
    report: SyncReport,
    progress: Progress | None,
) -> tuple[list[tuple[SourceFile, os.stat_result]], set[FileKey], list[FileKey]]:
    """One ``stat`` per file: same size and mtime_ns as indexed means unchanged.

    Returns the files to read, every key seen, and indexed keys that vanished.
    """
    seen: set[FileKey] = set()
    stale: list[FileKey] = []
    candidates: list[tuple[SourceFile, os.stat_result]] = []
    for file in files:
        key = (file.source, file.path)
        if key in seen:
            continue
        seen.add(key)
        try:
            stat = os.stat(file.abs_path)
        except OSError as exc:
            reason = "vanished during sync" if isinstance(exc, FileNotFoundError) else "unreadable"
            report.skipped.append((file.path, reason))
            stale.extend([key] if key in known else [])
            continue
        old = known.get(key)
        if old is not None and old.size == stat.st_size and old.mtime_ns == stat.st_mtime_ns:
            report.unchanged += 1
            if progress is not None:
                done = report.unchanged + len(report.skipped)
                progress(ProgressUpdate(READING, done, len(files), "files", file.path))
            continue
        candidates.append((file, stat))
    return candidates, seen, stale


@dataclass
class _Step:
    """Progress bookkeeping: files done so far out of ``total``."""

    done: int
    total: int
    report: Progress | None

    def advance(self, path: str) -> None:
        self.done += 1
        if self.report is not None:
            self.report(ProgressUpdate(READING, self.done, self.total, "files", path))


def _sync_candidates(
    store: IndexWriter,
    writer: _Writer,
    candidates: list[tuple[SourceFile, os.stat_result]],
    known: dict[FileKey, FileStamp],
    gone: dict[FileKey, FileStamp],
    opts: SyncOptions,
    step: _Step,
) -> list[FileKey]:
    """Read, hash and classify files whose stat changed; write, move or re-stamp them.

    Returns the keys of indexed files that are now skipped (to delete from the index).
    """
    by_hash: dict[tuple[str, str], list[FileKey]] = {}
    for key, stamp in gone.items():
        by_hash.setdefault((stamp.source, stamp.sha256), []).append(key)
    report = writer.report
    moves: list[tuple[FileKey, FileStamp]] = []
    texts: dict[FileKey, str] = {}
    restamps: list[FileStamp] = []
    stale: list[FileKey] = []
    for file, stat in candidates:
        step.advance(file.path)
        key = (file.source, file.path)
        old = known.get(key)
        try:
            if stat.st_size > opts.max_file_bytes:
                raise FileProblem(f"larger than the {opts.max_file_bytes}-byte limit")
            data, text = read_markdown(file.abs_path, opts.max_file_bytes)
        except FileProblem as problem:
            report.skipped.append((file.path, str(problem)))
            stale.extend([key] if old is not None else [])
            continue
        stamp = FileStamp(
            file.source, file.path, hashlib.sha256(data).hexdigest(), len(data), stat.st_mtime_ns
        )
        if old is not None and old.sha256 == stamp.sha256:
            restamps.append(stamp)
            report.unchanged += 1
        elif old is None and by_hash.get((stamp.source, stamp.sha256)):
            origin = by_hash[(stamp.source, stamp.sha256)].pop()
            gone.pop(origin)
            moves.append((origin, stamp))
            texts[origin] = text
        else:
            cut = cut_file(file.source, file.path, text, stamp.sha256, opts.chunking)
            tail = old is not None and cut.base == old.sha256 and isinstance(store, TailWriter)
            if tail:  # lines added to the file as the index holds it: write its end
                writer.add(_Parsed(stamp, cut.tail, is_new=False, cut=cut))
            else:
                writer.add(_Parsed(stamp, cut.units, is_new=old is None))
    store.update_stamps(restamps)
    lost = set(store.move_files(moves))
    report.renamed += len(moves) - len(lost)
    for origin, stamp in moves:
        if origin in lost:  # another process moved or deleted it first: index it afresh
            units = units_of(stamp.source, stamp.path, texts[origin], opts.chunking)
            writer.add(_Parsed(stamp, units, is_new=True))
    writer.flush()
    return stale


def rebuild_index(
    store: IndexWriter,
    embedder: Embedder | None,
    files: Sequence[SourceFile],
    *,
    sources: Sequence[str],
    options: SyncOptions | None = None,
    keep_cache: bool = True,
    tokenizer: str | None = None,
    progress: Progress | None = None,
) -> SyncReport:
    """Clear the whole index (identity too; the embedding cache unless ``keep_cache=False``),
    optionally switch the FTS ``tokenizer``, then sync ``files``.

    Open the store with ``tokenizer=None`` to rebuild an index whose tokenizer differs.
    """
    store.clear(keep_cache=keep_cache, tokenizer=tokenizer)
    return sync_files(store, embedder, files, sources=sources, options=options, progress=progress)
