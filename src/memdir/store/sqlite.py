"""The SQLite index store: files, units, FTS5, vectors and the embedding cache.

Open it with ``SqliteStore.open(path)`` or ``with SqliteStore(path) as store``;
``__init__`` only stores its arguments.

Threads: one store holds one connection, guarded by a lock, so a store may be
shared by threads (calls are serialised). For parallel work, open one store per
thread or process. Processes: WAL mode and a busy timeout let readers and one
writer work at once; every write is one short ``BEGIN IMMEDIATE`` transaction,
retried on ``database is locked`` by ``connect.retry_locked``.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt

from memdir.errors import IndexMismatchError, InvalidInputError, StoreError
from memdir.store import writes as writes_sql
from memdir.store.base import EmbedderIdentity, IndexStats, ScoredId, Unit, UnitKind
from memdir.store.connect import (
    REBUILD_HINT,
    SCAN_CACHE_KIB,
    SCAN_MMAP_BYTES,
    Connection,
    connect,
    database_error,
    delete_database,
    is_locked,
    retry_locked,
)
from memdir.store.fts import (
    TermStats,
    every_phrase,
    phrase_frequencies,
    ranked_units,
    refresh_stats,
    smoothed_idf,
)
from memdir.store.keywords import KeywordIndex
from memdir.store.migrations import (
    TOKENIZERS,
    apply_migrations,
    create_fts,
    drop_fts,
    pending_migrations,
)
from memdir.store.records import FileKey, FileStamp, FileWrite
from memdir.store.terms import (
    PENDING_KEY,
    TERM_LOG,
    TERMS_TOKENIZER,
    Tokens,
    backfill_terms,
    count_missing,
    create_terms,
    has_terms,
    mark_pending,
)
from memdir.store.vectors import (
    VEC_TABLE,
    NumpyIndex,
    VecIndex,
    VectorIndex,
    create_log,
    has_log,
    reset_log,
)
from memdir.store.vectors.graph import (
    GRAPH_MIN_ROWS,
    GraphTag,
    build_graph,
    drop_tags,
    graphs_due,
    read_tags,
    remove_other_files,
    write_tag,
)
from memdir.store.vectors.log import VECTOR_LOG

logger = logging.getLogger(__name__)

VectorBackend = Literal["auto", "sqlite-vec", "numpy"]
KeywordRanking = Literal["memory", "fts5"]
T = TypeVar("T")
BACKFILL_FILES = 200  # files given their terms per transaction when an old index is opened
MAX_CACHED_PHRASES = 10_000  # query phrases whose terms are remembered
_UNIT_COLUMNS = (
    "u.id, u.source, u.path, u.kind, u.start_line, u.end_line, u.text, u.heading_path, "
    "u.sha256, f.mtime"
)


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _batches(items: Sequence[T], size: int = 500) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class SqliteStore:
    """The default index store (implements ``IndexStore`` plus the writer methods).

    ``tokenizer`` is ``"porter"`` or ``"trigram"`` (for CJK); ``None`` accepts
    whatever the index was built with. ``identity``, when given, is checked
    against the index before vectors are searched. ``vector_backend`` forces
    ``"numpy"`` or ``"sqlite-vec"`` for a new index; ``"auto"`` picks numpy (both
    are searched through the same in-memory mirror; see ``memdir.store.vectors``).
    ``keyword_ranking`` ``"memory"`` (default) ranks BM25 in memory from the kept terms
    (``memdir.store.keywords``; about 6 bytes per posting), ``"fts5"`` with FTS5's
    ``bm25()`` (no memory held, about ten times slower); both give the same lists.
    ``graph_min_rows``: a unit kind with this many vectors is searched through a
    vector graph kept beside the index (built by :meth:`optimize_vectors`; 0: never).
    """

    def __init__(
        self,
        path: Path | str,
        *,
        tokenizer: str | None = "porter",
        identity: EmbedderIdentity | None = None,
        vector_backend: VectorBackend = "auto",
        keyword_ranking: KeywordRanking = "memory",
        graph_min_rows: int = GRAPH_MIN_ROWS,
    ) -> None:
        self.path = Path(path)
        self.graph_min_rows = graph_min_rows
        self.requested_tokenizer = tokenizer
        self.expected_identity = identity
        self.requested_backend = vector_backend
        self.keyword_ranking = keyword_ranking
        self._lock = threading.RLock()
        self._db: Connection | None = None
        # Vector search reads through a connection of its own, so a search's vector
        # lookups (in the query-embedding thread) overlap its full-text pass.
        self._vector_lock = threading.Lock()
        self._vector_db: Connection | None = None
        self._numpy = NumpyIndex()
        self._vec = VecIndex()
        self._term_stats = TermStats()
        self._tokens = Tokens(TOKENIZERS[TERMS_TOKENIZER])
        self._keywords = KeywordIndex()
        self._phrase_terms: dict[str, tuple[int, ...] | None] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        tokenizer: str | None = "porter",
        identity: EmbedderIdentity | None = None,
        vector_backend: VectorBackend = "auto",
        keyword_ranking: KeywordRanking = "memory",
        graph_min_rows: int = GRAPH_MIN_ROWS,
    ) -> SqliteStore:
        """Open (creating if needed) the index at ``path``; migrate; check the tokenizer."""
        store = cls(
            path,
            tokenizer=tokenizer,
            identity=identity,
            vector_backend=vector_backend,
            keyword_ranking=keyword_ranking,
            graph_min_rows=graph_min_rows,
        )
        store.connect()
        return store

    def connect(self) -> None:
        if self._db is not None:
            return
        if self.requested_tokenizer is not None and self.requested_tokenizer not in TOKENIZERS:
            raise InvalidInputError(
                f"unknown tokenizer {self.requested_tokenizer!r}; use one of {sorted(TOKENIZERS)}"
            )
        if self.requested_backend not in ("auto", "sqlite-vec", "numpy"):
            raise InvalidInputError(f"unknown vector backend {self.requested_backend!r}")
        if self.keyword_ranking not in ("memory", "fts5"):
            raise InvalidInputError(
                f"unknown keyword ranking {self.keyword_ranking!r}; use 'memory' or 'fts5'"
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # sqlite-vec loads even when numpy is requested: an index built with it keeps it.
        db = connect(self.path, want_vec=True)
        self._db = db
        try:
            self._prepare_schema()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.conn.close()
                self._db = None
        with self._vector_lock:
            if self._vector_db is not None:
                self._vector_db.conn.close()
                self._vector_db = None

    def __enter__(self) -> SqliteStore:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @staticmethod
    def delete(path: Path | str) -> None:
        """Delete the index database files at ``path`` (used by rebuild)."""
        delete_database(Path(path))

    def _prepare_schema(self) -> None:
        needs_write = self._read(
            lambda c: (
                bool(pending_migrations(c)) or self._no_fts(c) or not has_log(c) or not has_terms(c)
            )
        )
        if needs_write:
            self._write(self._migrate)
        if PENDING_KEY in self._meta():
            self._backfill_terms()
        recorded = self.tokenizer
        wanted = self.requested_tokenizer
        if wanted is not None and recorded != wanted:
            if self._read(lambda c: c.execute("SELECT count(*) FROM units").fetchone()[0]) == 0:
                self._write(lambda c: self._replace_fts(c, wanted))
                return
            raise IndexMismatchError(
                f"the index {str(self.path)!r} was built with the {recorded!r} tokenizer, "
                f"not {wanted!r}; {REBUILD_HINT} to rebuild it with {wanted!r}"
            )

    def _no_fts(self, conn: sqlite3.Connection) -> bool:
        row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'units_fts'").fetchone()
        return row is None

    def _migrate(self, conn: sqlite3.Connection) -> None:
        apply_migrations(conn)
        if self._no_fts(conn):
            create_fts(conn, self.requested_tokenizer or "porter")
        create_log(conn)
        if not has_terms(conn):
            create_terms(conn)
            if _read_meta(conn).get("tokenizer", "porter") == TERMS_TOKENIZER:
                mark_pending(conn)

    def _backfill_terms(self) -> None:
        """Give every file of an index made before kept terms its terms row, in batches."""
        missing = self._read(count_missing)
        if missing:
            logger.info("indexing the terms of %d files for keyword search (once)", missing)
        done = 0
        while True:
            written = self._write(lambda c: backfill_terms(c, self._tokens, BACKFILL_FILES))
            done += written
            if written == 0:
                return
            logger.info("terms of %d of %d files indexed", done, missing)

    def _replace_fts(self, conn: sqlite3.Connection, tokenizer: str) -> None:
        drop_fts(conn)
        create_fts(conn, tokenizer)

    # -- transactions ------------------------------------------------------------------------

    def _conn(self) -> Connection:
        if self._db is None:
            raise StoreError(f"the index store {str(self.path)!r} is not open; call open() first")
        return self._db

    @contextmanager
    def _translated(self, db: Connection | None = None) -> Iterator[Connection]:
        db = db or self._conn()
        try:
            yield db
        except db.errors as exc:
            raise database_error(self.path, exc) from exc

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock, self._translated() as db:
            return retry_locked(lambda: fn(db.conn), db.errors)

    def _vector_read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``_read`` on the vector-search connection (opened on first use)."""
        self._conn()  # the store must be open
        with self._vector_lock:
            if self._vector_db is None:
                self._vector_db = connect(
                    self.path, want_vec=True, mmap_bytes=SCAN_MMAP_BYTES, cache_kib=SCAN_CACHE_KIB
                )
            with self._translated(self._vector_db) as db:
                return retry_locked(lambda: fn(db.conn), db.errors)

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction, retried as a whole when locked."""

        def attempt(conn: sqlite3.Connection) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        with self._lock, self._translated() as db:
            return retry_locked(lambda: attempt(db.conn), db.errors)

    # -- meta, identity and backend ----------------------------------------------------------

    def _meta(self) -> dict[str, str]:
        return self._read(_read_meta)

    @property
    def tokenizer(self) -> str:
        return self._meta().get("tokenizer", "porter")

    @property
    def identity(self) -> EmbedderIdentity | None:
        """The embedder identity recorded in the index, or None (keyword-only so far)."""
        return _identity(self._meta())

    def _backend(self, meta: dict[str, str]) -> VectorIndex:
        name = meta.get("vector_backend") or self._default_backend()
        if name == "numpy":
            return self._numpy
        if not self._conn().vec_loaded:
            raise StoreError(
                f"the index {str(self.path)!r} stores vectors with sqlite-vec, which cannot be "
                f"loaded here; install 'sqlite-vec' or {REBUILD_HINT}"
            )
        return self._vec

    def _default_backend(self) -> str:
        if self.requested_backend == "sqlite-vec" and not self._conn().vec_loaded:
            raise StoreError("vector_backend='sqlite-vec' was requested but sqlite-vec cannot load")
        # "auto" is numpy: search runs on the in-memory mirror either way, and loading it
        # from the plain table is several times faster than from a vec0 table.
        return "sqlite-vec" if self.requested_backend == "sqlite-vec" else "numpy"

    def bind_identity(self, identity: EmbedderIdentity) -> None:
        """Record ``identity`` in a keyword-only index, or check it matches the recorded one."""
        recorded = self.identity
        if recorded is not None:  # the common case needs no write lock
            _check_identity(recorded, identity, self.path)
            return

        def bind(conn: sqlite3.Connection) -> None:
            meta = _read_meta(conn)
            recorded = _identity(meta)
            if recorded is not None:
                _check_identity(recorded, identity, self.path)
                return
            backend = meta.get("vector_backend") or self._default_backend()
            rows = {
                "identity_provider": identity.provider,
                "identity_model": identity.model,
                "identity_dimensions": str(identity.dimensions),
                "vector_backend": backend,
            }
            conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(rows.items()))
            self._backend(rows).create(conn, identity.dimensions)
            for (source,) in conn.execute("SELECT DISTINCT source FROM files").fetchall():
                writes_sql.mark_incomplete(conn, source)  # units written before any embedder

        self._write(bind)

    def _vector_index(
        self, query_dims: int | None = None, meta: dict[str, str] | None = None
    ) -> VectorIndex | None:
        meta = self._meta() if meta is None else meta
        recorded = _identity(meta)
        if recorded is None:
            return None
        if self.expected_identity is not None:
            _check_identity(recorded, self.expected_identity, self.path)
        if query_dims is not None and query_dims != recorded.dimensions:
            raise IndexMismatchError(
                f"the query vector has {query_dims} dimensions but the index {str(self.path)!r} "
                f"holds {recorded.dimensions}-dimensional vectors of {recorded.model!r}; "
                f"{REBUILD_HINT}"
            )
        return self._backend(meta)

    # -- IndexStore (what search reads) ------------------------------------------------------

    def keyword_search(
        self, match_expression: str, sources: Sequence[str], kind: UnitKind, limit: int
    ) -> list[ScoredId]:
        """FTS5 over units of one kind ordered by ``bm25()``; see :meth:`keyword_search_kinds`."""
        return self.keyword_search_kinds(match_expression, sources, (kind,), limit)[kind]

    def keyword_search_kinds(
        self,
        match_expression: str,
        sources: Sequence[str],
        kinds: Sequence[UnitKind],
        limit: int,
    ) -> dict[UnitKind, list[ScoredId]]:
        """FTS5 over units: the top ``limit`` of each kind, ordered by ``bm25()``, then id.

        ``score`` is ``-bm25()`` (>= 0). One MATCH pass serves every kind, and an OR of
        quoted terms over many rows is pruned (``memdir.store.fts``): the same top
        ``limit`` per kind as ranking every matching row.
        """
        wanted = list(dict.fromkeys(kinds))
        if not sources or limit <= 0 or not match_expression.strip() or not wanted:
            return {kind: [] for kind in wanted}
        with self._lock, self._translated() as db:
            try:
                found = retry_locked(
                    lambda: self._ranked(db.conn, match_expression, sources, wanted, limit),
                    db.errors,
                )
            except db.errors as exc:
                text = str(exc).lower()
                if is_locked(exc) or any(w in text for w in ("malformed", "database", "full")):
                    raise
                raise InvalidInputError(
                    f"invalid full-text query {match_expression!r} ({exc}); "
                    "quote user text as FTS5 phrases"
                ) from exc
        return {
            kind: [ScoredId(unit_id=uid, score=max(0.0, score)) for uid, score in found[kind]]
            for kind in wanted
        }

    def _ranked(
        self,
        conn: sqlite3.Connection,
        expression: str,
        sources: Sequence[str],
        kinds: Sequence[UnitKind],
        limit: int,
    ) -> dict[UnitKind, list[tuple[int, float]]]:
        """In memory (``memdir.store.keywords``) when the expression is an OR of one-term
        phrases and the index keeps terms; FTS5 (``memdir.store.fts``) otherwise."""
        terms = self._query_terms(conn, expression)
        if terms is not None:
            conn.execute("BEGIN")
            try:
                if self._keywords.refresh(conn):
                    return self._keywords.search(terms, sources, kinds, limit)
            finally:
                conn.execute("COMMIT")
        return ranked_units(conn, self._term_stats, expression, sources, kinds, limit)

    def keyword_coverage(
        self, match_expression: str, unit_ids: Sequence[int]
    ) -> dict[int, float] | None:
        """For each unit, the share of the query's information it holds (its phrases'
        ``smoothed_idf`` over all of the query's), comparable across queries. None for
        expressions other than an OR of quoted phrases."""
        phrases = every_phrase(match_expression)
        if phrases is None:
            return None
        ids = list(dict.fromkeys(unit_ids))
        if not ids:
            return {}
        with self._lock, self._translated() as db:
            return retry_locked(
                lambda: self._coverage(db.conn, match_expression, phrases, ids), db.errors
            )

    def _coverage(
        self, conn: sqlite3.Connection, expression: str, phrases: list[str], ids: list[int]
    ) -> dict[int, float]:
        terms = self._query_terms(conn, expression)
        if terms is not None:
            conn.execute("BEGIN")
            try:
                if self._keywords.refresh(conn):
                    return self._keywords.coverage(terms, ids)
            finally:
                conn.execute("COMMIT")
        refresh_stats(conn, self._term_stats)
        distinct = list(dict.fromkeys(phrases))
        found = phrase_frequencies(conn, self._term_stats, distinct)
        held = dict.fromkeys(ids, 0.0)
        total = 0.0
        marks = _marks(len(ids))
        for phrase in distinct:
            weight = smoothed_idf(found[phrase], self._term_stats.rows)
            total += weight
            rows = conn.execute(
                f"SELECT rowid FROM units_fts WHERE units_fts MATCH ? AND rowid IN ({marks})",
                (phrase, *ids),
            ).fetchall()
            for (unit_id,) in rows:
                held[int(unit_id)] += weight
        return {unit: (value / total if total > 0.0 else 0.0) for unit, value in held.items()}

    def _query_terms(self, conn: sqlite3.Connection, expression: str) -> list[int] | None:
        """The term hash of each phrase of an ``"a" OR "b"`` expression, in order; None
        when the index keeps no terms or a phrase is not exactly one term (FTS5 then)."""
        phrases = every_phrase(expression)
        if phrases is None or self.keyword_ranking != "memory" or not self._terms_tokens(conn):
            return None
        unknown = [p for p in dict.fromkeys(phrases) if p not in self._phrase_terms]
        if unknown:
            if len(self._phrase_terms) > MAX_CACHED_PHRASES:
                self._phrase_terms.clear()
            texts = [p[1:-1].replace('""', '"') for p in unknown]
            for phrase, tokens in zip(unknown, self._tokens.of_texts(conn, texts), strict=True):
                self._phrase_terms[phrase] = (
                    tuple(self._tokens.hash(t) for t in tokens) if len(tokens) <= 1 else None
                )
        terms: list[int] = []
        for phrase in phrases:
            found = self._phrase_terms[phrase]
            if found is None:
                return None
            terms.extend(found)
        return terms

    def vector_search(
        self, query: npt.NDArray[np.float32], sources: Sequence[str], kind: UnitKind, limit: int
    ) -> list[ScoredId]:
        """Nearest units by cosine similarity (``score`` in [-1, 1]); [] in keyword-only mode.

        Runs on a connection of its own: safe to call while another thread of the same
        search is in :meth:`keyword_search_kinds`.
        """
        if not sources or limit <= 0:
            return []

        def find(conn: sqlite3.Connection) -> list[ScoredId]:
            meta = _read_meta(conn)
            index = self._vector_index(int(np.asarray(query).shape[-1]), meta)
            return [] if index is None else index.search(conn, query, sources, kind, limit)

        return self._vector_read(find)

    def get_units(self, ids: Iterable[int]) -> dict[int, Unit]:
        wanted = list(dict.fromkeys(ids))
        out: dict[int, Unit] = {}

        def fetch(conn: sqlite3.Connection) -> None:
            for batch in _batches(wanted):
                rows = conn.execute(
                    f"SELECT {_UNIT_COLUMNS} FROM units u JOIN files f ON f.id = u.file_id "
                    f"WHERE u.id IN ({_marks(len(batch))})",
                    list(batch),
                )
                out.update((row[0], _unit(row)) for row in rows)

        self._read(fetch)
        return out

    def get_vectors(self, ids: Iterable[int]) -> dict[int, npt.NDArray[np.float32]]:
        wanted = list(dict.fromkeys(ids))
        index = self._vector_index()
        if index is None or not wanted:
            return {}
        return self._read(lambda c: index.get(c, wanted))

    def count_files(self, sources: Sequence[str]) -> int:
        if not sources:
            return 0
        sql = f"SELECT count(*) FROM files WHERE source IN ({_marks(len(sources))})"
        return int(self._read(lambda c: c.execute(sql, list(sources)).fetchone()[0]))

    # -- writer methods (used by memdir.index) -----------------------------------------------

    def file_stamps(self, sources: Sequence[str]) -> dict[FileKey, FileStamp]:
        """Every indexed file of ``sources`` in one query."""
        if not sources:
            return {}
        sql = (
            "SELECT source, path, sha256, size, mtime_ns FROM files "
            f"WHERE source IN ({_marks(len(sources))})"
        )
        rows = self._read(lambda c: c.execute(sql, list(sources)).fetchall())
        return {(r[0], r[1]): FileStamp(*r) for r in rows}

    def write_files(
        self, writes: Sequence[FileWrite], identity: EmbedderIdentity | None = None
    ) -> int:
        """Replace the units (and vectors) of each file in one transaction; returns units written.

        With ``identity``, the vectors also enter the embedding cache under each unit's sha256.
        """
        if not writes:
            return 0
        if any(w.vectors is not None for w in writes) and self._vector_index() is None:
            raise StoreError("vectors given but no embedder identity is bound; call bind_identity")
        recorded = self.identity
        if identity is not None and recorded is not None:
            _check_identity(recorded, identity, self.path)

        def write(conn: sqlite3.Connection) -> int:
            tokens = self._terms_tokens(conn)
            return sum(
                writes_sql.write_file(conn, w, self._resolve, identity, tokens) for w in writes
            )

        return self._write(write)

    def _terms_tokens(self, conn: sqlite3.Connection) -> Tokens | None:
        """The tokenizer that keeps ``file_terms``; None for an index whose FTS5 tokenizer
        has no kept terms (trigram: its keyword search is FTS5's own)."""
        keeps = _read_meta(conn).get("tokenizer", "porter") == TERMS_TOKENIZER
        return self._tokens if keeps else None

    def _resolve(self, conn: sqlite3.Connection) -> VectorIndex | None:
        """The vector index, read inside the caller's transaction (None when keyword-only)."""
        meta = _read_meta(conn)
        return None if _identity(meta) is None else self._backend(meta)

    def move_files(self, moves: Sequence[tuple[FileKey, FileStamp]]) -> list[FileKey]:
        """Rename files (same content): units keep their text, ids and vectors.

        Returns the old keys that were no longer in the index (another process moved or
        deleted them first); the caller writes those files afresh.
        """

        def move(conn: sqlite3.Connection) -> list[FileKey]:
            return [
                old for old, new in moves if not writes_sql.move_file(conn, self._resolve, old, new)
            ]

        return self._write(move) if moves else []

    def delete_files(self, keys: Sequence[FileKey]) -> None:
        """Remove files and their units and vectors from the index."""

        def delete(conn: sqlite3.Connection) -> None:
            for key in keys:
                writes_sql.delete_file(conn, self._resolve, key)

        if keys:
            self._write(delete)

    def update_stamps(self, stamps: Sequence[FileStamp]) -> None:
        """Record a new size/mtime for files whose content hash did not change."""
        if stamps:
            self._write(lambda c: writes_sql.update_stamps(c, stamps))

    def files_missing_vectors(self, sources: Sequence[str]) -> set[FileKey]:
        """Files of ``sources`` with units that have no vector (written keyword-only).

        Costs one meta read unless a keyword-only write was recorded for a source.
        """
        meta = self._meta()
        flagged = [s for s in sources if f"vectors_incomplete:{s}" in meta]
        index = self._vector_index()
        if not flagged or index is None:
            return set()
        sql = f"SELECT id, source, path FROM units WHERE source IN ({_marks(len(flagged))})"

        def find(conn: sqlite3.Connection) -> set[FileKey]:
            rows = conn.execute(sql, flagged).fetchall()
            have = index.get_ids(conn, [r[0] for r in rows])
            return {(r[1], r[2]) for r in rows if r[0] not in have}

        return self._read(find)

    def mark_vectors_complete(self, sources: Sequence[str]) -> None:
        """Forget the keyword-only marks of ``sources`` (after a sync with an embedder)."""
        keys = [(f"vectors_incomplete:{s}",) for s in sources]
        if any(k in self._meta() for (k,) in keys):
            self._write(lambda c: c.executemany("DELETE FROM meta WHERE key = ?", keys))

    def cached_vectors(
        self, identity: EmbedderIdentity, hashes: Iterable[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Vectors from the embedding cache for these text hashes (misses are absent)."""
        wanted = list(dict.fromkeys(hashes))
        out: dict[str, npt.NDArray[np.float32]] = {}
        sql = (
            "SELECT text_sha256, vector FROM embedding_cache WHERE provider = ? AND model = ? "
            "AND dimensions = ? AND text_sha256 IN ({})"
        )

        def fetch(conn: sqlite3.Connection) -> None:
            for batch in _batches(wanted):
                args = (identity.provider, identity.model, identity.dimensions, *batch)
                rows = conn.execute(sql.format(_marks(len(batch))), args)
                out.update((h, np.frombuffer(blob, dtype=np.float32).copy()) for h, blob in rows)

        self._read(fetch)
        return out

    def clear(self, *, keep_cache: bool = True, tokenizer: str | None = None) -> None:
        """Empty the index (files, units, vectors, identity); optionally switch the tokenizer."""
        if tokenizer is not None and tokenizer not in TOKENIZERS:
            raise InvalidInputError(
                f"unknown tokenizer {tokenizer!r}; use one of {sorted(TOKENIZERS)}"
            )

        def clear(conn: sqlite3.Connection) -> None:
            current = _read_meta(conn)
            if conn.execute(f"SELECT 1 FROM sqlite_master WHERE name = '{VEC_TABLE}'").fetchone():
                self._vec_loaded_or_fail()
                conn.execute(f"DROP TABLE {VEC_TABLE}")
            drop_fts(conn)
            for table in ("unit_vectors", "units", "file_terms", "files"):
                conn.execute(f"DELETE FROM {table}")
            if not keep_cache:
                conn.execute("DELETE FROM embedding_cache")
            conn.execute(
                "DELETE FROM meta WHERE key LIKE 'identity_%' OR key = 'vector_backend' "
                "OR key LIKE 'vectors_incomplete:%' OR key = ?",
                (PENDING_KEY,),
            )
            create_fts(conn, tokenizer or current.get("tokenizer", "porter"))
            drop_tags(conn)
            reset_log(conn, uuid.uuid4().hex)
            TERM_LOG.reset(conn, uuid.uuid4().hex)

        self._write(clear)
        remove_other_files(self.path, "*", None)  # every kind's graph: its tag is gone
        self._numpy = NumpyIndex()
        self._vec = VecIndex()

    def optimize_vectors(self, progress: Callable[[str], None] | None = None) -> list[str]:
        """Build the vector graph of each unit kind that needs one; returns the kinds built.

        A kind of ``graph_min_rows`` vectors or more needs one when it has none for this
        index, or it is outdated (``memdir.store.vectors.graph.graphs_due``). Building
        reads the kind's vectors into this process and takes minutes at a million rows
        on two cores; ``progress`` hears of each build first. Searches in other processes
        keep scanning until the new graph's tag is committed, then map it.
        """
        index = self._vector_index()
        if self.graph_min_rows <= 0 or index is None:
            return []
        due = self._read(lambda c: graphs_due(c, self.path, self.graph_min_rows))
        return [kind for kind in due if self._build_graph(index, kind, progress)]

    def _build_graph(
        self, index: VectorIndex, kind: str, progress: Callable[[str], None] | None
    ) -> bool:
        snapshot = self._vector_read(lambda c: index.mirror.snapshot(c, kind))
        if snapshot is None or len(snapshot[1]) < self.graph_min_rows:
            return False
        (epoch, seq), ids, vectors = snapshot
        message = f"building the vector graph of {len(ids):,} {kind}s"
        logger.info("%s (%s)", message, self.path)
        if progress is not None:
            progress(message)
        started = time.perf_counter()
        name = build_graph(self.path, kind, ids, vectors)
        tag = GraphTag(file=name, epoch=epoch, seq=seq, rows=len(ids))

        def publish(conn: sqlite3.Connection) -> bool:
            if VECTOR_LOG.state(conn).epoch != epoch:
                return False  # the index was cleared meanwhile
            write_tag(conn, kind, tag)
            return True

        published = self._write(publish)
        remove_other_files(self.path, kind, name if published else None)
        logger.info(
            "vector graph of %d %ss built in %.1f s", len(ids), kind, time.perf_counter() - started
        )
        return published

    def _vec_loaded_or_fail(self) -> None:
        if not self._conn().vec_loaded:
            raise StoreError(
                f"the index {str(self.path)!r} has a sqlite-vec table but sqlite-vec cannot be "
                "loaded; delete the index file and run `memdir index rebuild`"
            )

    def stats(self) -> IndexStats:
        def count(conn: sqlite3.Connection) -> dict[str, int]:
            sql = {
                "files": "SELECT count(*) FROM files",
                "chunks": "SELECT count(*) FROM units WHERE kind = 'chunk'",
                "blocks": "SELECT count(*) FROM units WHERE kind = 'block'",
                "cache": "SELECT count(*) FROM embedding_cache",
                "numpy": "SELECT count(*) FROM unit_vectors",
            }
            return {k: int(conn.execute(q).fetchone()[0]) for k, q in sql.items()}

        counts = self._read(count)
        meta = self._meta()
        backend = meta.get("vector_backend") or self._default_backend()
        vectors = counts["numpy"]
        if backend == "sqlite-vec" and _identity(meta) is not None and self._conn().vec_loaded:
            vectors = self._read(
                lambda c: c.execute(f"SELECT count(*) FROM {VEC_TABLE}").fetchone()[0]
            )
        db = self._conn()
        return IndexStats(
            files=counts["files"],
            chunks=counts["chunks"],
            blocks=counts["blocks"],
            vectors=int(vectors),
            cached_embeddings=counts["cache"],
            identity=_identity(meta),
            vector_backend=backend,
            db_path=str(self.path),
            extra={
                "tokenizer": meta.get("tokenizer", "porter"),
                "driver": db.driver,
                "sqlite_vec_loaded": db.vec_loaded,
                "vector_memory_bytes": self._numpy.mirror.nbytes + self._vec.mirror.nbytes,
                "vector_full_loads": self._numpy.mirror.full_loads + self._vec.mirror.full_loads,
                "keyword_ranking": self.keyword_ranking,
                "keyword_memory_bytes": self._keywords.nbytes,
                "keyword_full_loads": self._keywords.full_loads,
                "vector_graphs": {kind: tag.rows for kind, tag in self._read(read_tags).items()},
            },
        )


def _read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The ``meta`` table as a dict, read on ``conn`` (inside its current transaction)."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def _identity(meta: dict[str, str]) -> EmbedderIdentity | None:
    if "identity_provider" not in meta:
        return None
    return EmbedderIdentity(
        provider=meta["identity_provider"],
        model=meta["identity_model"],
        dimensions=int(meta["identity_dimensions"]),
    )


def _check_identity(recorded: EmbedderIdentity, wanted: EmbedderIdentity, path: Path) -> None:
    if recorded != wanted:
        raise IndexMismatchError(
            f"the index {str(path)!r} was built with embedder {recorded.provider}/"
            f"{recorded.model} ({recorded.dimensions} dimensions), not {wanted.provider}/"
            f"{wanted.model} ({wanted.dimensions} dimensions); {REBUILD_HINT}"
        )


def _unit(row: Sequence[object]) -> Unit:
    uid, source, path, kind, start, end, text, heading, sha, mtime = row
    return Unit(
        id=int(uid),  # type: ignore[call-overload]
        source=str(source),
        path=str(path),
        kind="block" if kind == "block" else "chunk",
        start_line=int(start),  # type: ignore[call-overload]
        end_line=int(end),  # type: ignore[call-overload]
        text=str(text),
        heading_path=tuple(str(heading).split("\n")) if heading else (),
        sha256=str(sha),
        file_mtime=float(mtime),  # type: ignore[arg-type]
    )
