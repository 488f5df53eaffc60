"""The SQLite index store: connections, transactions and the writer; engines do the searching.

Open it with ``SqliteStore.open(path)`` or ``with SqliteStore(path) as store``;
``__init__`` only stores its arguments. The schema is ``migrations.py``'s; the two
engines (``changelog.py`` lists them and the freshness rules they follow) answer the
searches: ``KeywordRanker`` on the store's connection, ``VectorSearch`` on one of its
own, so the vector searches of one search (in the query-embedding thread) overlap its
keyword pass; units and vectors by id are read on a third, so a server's searches do not
queue for them behind each other's keyword passes.

Threads: each connection is guarded by a lock, so a store may be shared by threads
(calls are serialised per connection). Processes: WAL mode and a busy timeout let
readers and one writer work at once; every write is one short ``BEGIN IMMEDIATE``
transaction, retried on ``database is locked`` by ``connect.retry_locked``.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import numpy as np

from memdir.errors import IndexMismatchError, InvalidInputError, StoreError
from memdir.store.contracts import (
    Around,
    EmbedderIdentity,
    FileKey,
    FileStamp,
    FileTail,
    FileWrite,
    IndexStats,
    KeywordQuery,
    ScoredId,
    Unit,
    UnitKind,
    Vector,
)
from memdir.store.identity import REBUILD_HINT, check_index_identity
from memdir.store.sqlite import rows, writes
from memdir.store.sqlite.changelog import catch_up
from memdir.store.sqlite.connect import (
    READER_CACHE_KIB,
    Connection,
    connect,
    delete_database,
    ensure_folder,
    reopened,
    run,
)
from memdir.store.sqlite.keywords.ranker import KeywordRanker
from memdir.store.sqlite.keywords.terms import TOKENIZERS, Tokens
from memdir.store.sqlite.migrations import MIGRATIONS, advance, pending
from memdir.store.sqlite.vectors.graph import (
    GRAPH_MIN_ROWS,
    build_graphs,
    read_tags,
    remove_other_files,
)
from memdir.store.sqlite.vectors.search import VectorSearch

log = logging.getLogger(__name__)
T = TypeVar("T")


class SqliteStore:
    """The default index store (an ``IndexWriter``).

    ``tokenizer`` is ``"porter"`` or ``"trigram"`` (for CJK); ``None`` accepts whatever
    the index was built with. ``identity``, when given, is checked against the index
    before vectors are searched. ``graph_min_rows``: a unit kind with this many vectors
    is searched through a vector graph kept beside the index (built by
    :meth:`optimize`; 0: never).
    """

    def __init__(
        self,
        path: Path | str,
        *,
        tokenizer: str | None = "porter",
        identity: EmbedderIdentity | None = None,
        graph_min_rows: int = GRAPH_MIN_ROWS,
    ) -> None:
        self.path = Path(path)
        self.requested_tokenizer = tokenizer
        self.expected_identity = identity
        self.graph_min_rows = graph_min_rows
        self._lock = threading.RLock()
        self._db: Connection | None = None
        # side connections, each with its lock: "vectors" answers the vector searches of a
        # search's embedding thread, "rows" fetches units and vectors by id, so neither
        # waits for other threads' keyword passes on the main connection
        self._side_locks = {side: threading.Lock() for side in ("vectors", "rows")}
        self._sides: dict[str, Connection] = {}
        self.keywords = KeywordRanker()  # the engines: file_terms ...
        self.vectors = VectorSearch(self.path)  # ... and the vectors in ``embeddings``

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str, **options: object) -> SqliteStore:
        """Open (creating if needed) the index at ``path``; migrate; check the tokenizer."""
        store = cls(path, **options)  # type: ignore[arg-type]
        store.connect()
        return store

    def connect(self) -> None:
        if self._db is not None:
            return
        wanted = self.requested_tokenizer
        if wanted is not None and wanted not in TOKENIZERS:
            raise InvalidInputError(
                f"unknown tokenizer {wanted!r}; use one of {sorted(TOKENIZERS)}"
            )
        ensure_folder(self.path)
        self._db = connect(self.path)
        try:
            self._prepare()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.conn.close()
                self._db = None
        for side, lock in self._side_locks.items():
            with lock:
                db = self._sides.pop(side, None)
                if db is not None:
                    db.conn.close()

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
        """Delete the database files at ``path`` (used by rebuild)."""
        delete_database(Path(path))

    def _prepare(self) -> None:
        where = str(self.path)
        if self._read(lambda c: bool(pending(c, MIGRATIONS, "migrations", where))):
            while self._write(lambda c: advance(c, MIGRATIONS, "migrations", where)):
                pass  # a resumable migration did one batch; the next transaction goes on
        recorded, wanted = self.tokenizer, self.requested_tokenizer
        if wanted is None or (recorded == wanted and "tokenizer" in self._meta()):
            return
        if recorded != wanted and self._read(
            lambda c: c.execute("SELECT 1 FROM units LIMIT 1").fetchone()
        ):
            raise IndexMismatchError(
                f"the index {where!r} was built with the {recorded!r} tokenizer, not "
                f"{wanted!r}; {REBUILD_HINT} to rebuild it with {wanted!r}"
            )
        self._write(lambda c: writes.set_tokenizer(c, wanted))

    # -- transactions ------------------------------------------------------------------------

    def _conn(self) -> Connection:
        if self._db is None:
            raise StoreError(f"the index store {str(self.path)!r} is not open; call open() first")
        self._db = reopened(self._db, self.path)  # read-only until it can be written again
        return self._db

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            return run(self._conn(), self.path, fn)

    def _snapshot(self, db: Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn`` in one read transaction (one consistent view of every table)."""
        return run(db, self.path, fn, "BEGIN")

    def _side_read(
        self, side: str, fn: Callable[[sqlite3.Connection], T], snapshot: bool = False
    ) -> T:
        """``fn`` on the side connection ``side`` (opened on first use), in one read
        transaction with ``snapshot``."""
        self._conn()  # the store must be open
        with self._side_locks[side]:
            db = self._sides.get(side)
            if db is None:
                db = self._sides[side] = connect(self.path, cache_kib=READER_CACHE_KIB)
            db = self._sides[side] = reopened(db, self.path, READER_CACHE_KIB)
            return run(db, self.path, fn, "BEGIN" if snapshot else None)

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction, retried as a whole when locked."""
        with self._lock:
            return run(self._conn(), self.path, fn, "BEGIN IMMEDIATE")

    # -- meta and identity -------------------------------------------------------------------

    def _meta(self) -> dict[str, str]:
        return self._read(rows.read_meta)

    @property
    def tokenizer(self) -> str:
        return self._meta().get("tokenizer", "porter")

    @property
    def identity(self) -> EmbedderIdentity | None:
        """The embedder identity recorded in the index, or None (keyword-only so far)."""
        return EmbedderIdentity.from_meta(self._meta())

    def bind_identity(self, identity: EmbedderIdentity) -> None:
        """Record ``identity`` in a keyword-only index, or check it matches the recorded one."""
        recorded = self.identity
        if recorded is not None:  # the common case needs no write lock
            check_index_identity(str(self.path), recorded, identity)
            return

        self._write(lambda c: writes.bind_identity(c, identity, self.path))

    # -- IndexReader -------------------------------------------------------------------------

    def keyword_search(
        self, query: KeywordQuery, sources: Sequence[str], kinds: Sequence[UnitKind], limit: int
    ) -> dict[UnitKind, list[ScoredId]]:
        """BM25 over the units' kept terms (``KeywordRanker``): the top ``limit`` of each
        kind, score ``-bm25()`` of the OR of the query's tokens (>= 0), ties by lower id."""
        wanted = list(dict.fromkeys(kinds))
        if not sources or limit <= 0 or not query or not wanted:
            return {kind: [] for kind in wanted}

        def rank(conn: sqlite3.Connection) -> dict[UnitKind, list[tuple[int, float]]]:
            catch_up(self.keywords, conn)
            return self.keywords.search(self.keywords.terms_of(conn, query), sources, wanted, limit)

        with self._lock:
            found = self._snapshot(self._conn(), rank)
        return {k: [ScoredId(uid, max(0.0, score)) for uid, score in found[k]] for k in wanted}

    def keyword_coverage(self, query: KeywordQuery, unit_ids: Sequence[int]) -> dict[int, float]:
        """For each unit, the share of the query's information it holds (its tokens'
        ``smoothed_idf`` over all of the query's), comparable across queries."""
        ids = list(dict.fromkeys(unit_ids))
        if not ids or not query:
            return dict.fromkeys(ids, 0.0)

        def measure(conn: sqlite3.Connection) -> dict[int, float]:
            catch_up(self.keywords, conn)
            return self.keywords.coverage(self.keywords.terms_of(conn, query), ids)

        with self._lock:
            return self._snapshot(self._conn(), measure)

    def vector_search(
        self, query: Vector, sources: Sequence[str], kind: UnitKind, limit: int
    ) -> list[ScoredId]:
        """Nearest units by cosine similarity (``score`` in [-1, 1]); [] in keyword-only mode.

        Runs on the vector connection: safe beside :meth:`keyword_search` in another thread.
        """
        if not sources or limit <= 0:
            return []

        def find(conn: sqlite3.Connection) -> list[ScoredId]:
            dimensions = int(np.asarray(query).shape[-1])
            if not rows.searchable(conn, self.expected_identity, dimensions, self.path):
                return []
            catch_up(self.vectors, conn)
            return self.vectors.search(conn, query, sources, kind, limit)

        return self._side_read("vectors", find, snapshot=True)

    def get_units(self, ids: Iterable[int]) -> dict[int, Unit]:
        wanted = list(dict.fromkeys(ids))
        return self._side_read("rows", lambda c: rows.fetch_units(c, wanted))

    def blocks_around(self, ids: Sequence[int], reach: int) -> dict[int, Around]:
        wanted = list(dict.fromkeys(ids))
        if not wanted or reach < 1:
            return {}
        return self._side_read("rows", lambda c: rows.blocks_around(c, wanted, reach))

    def get_vectors(self, ids: Iterable[int]) -> dict[int, Vector]:
        wanted = list(dict.fromkeys(ids))
        if not wanted or self.identity is None:
            return {}
        return self._side_read("rows", lambda c: self.vectors.get(c, wanted))

    def count_files(self, sources: Sequence[str]) -> int:
        if not sources:
            return 0
        return self._read(lambda c: rows.count_files(c, sources))

    # -- IndexWriter -------------------------------------------------------------------------

    def file_stamps(self, sources: Sequence[str]) -> dict[FileKey, FileStamp]:
        """Every indexed file of ``sources`` in one query."""
        if not sources:
            return {}
        return self._read(lambda c: rows.file_stamps(c, sources))

    def write_files(
        self, items: Sequence[FileWrite], identity: EmbedderIdentity | None = None
    ) -> int:
        """Bring the units (and vectors) of each file to ``items`` in one transaction;
        returns units written. With ``identity``, the vectors also enter the embedding
        cache under each unit's sha256."""
        if not items:
            return 0
        self._check_vectors(any(w.vectors is not None for w in items), identity)

        def write(conn: sqlite3.Connection) -> int:
            tokens = Tokens(rows.tokenizer_of(conn))
            known = EmbedderIdentity.from_meta(rows.read_meta(conn))
            cache = identity is not None
            return sum(writes.write_file(conn, item, known, cache, tokens) for item in items)

        return self._write(write)

    def _check_vectors(self, vectors: bool, identity: EmbedderIdentity | None) -> None:
        """Refuse vectors without a bound embedder, or of another embedder than the index's."""
        recorded = self.identity
        if vectors and recorded is None:
            raise StoreError("vectors given but no embedder identity is bound; call bind_identity")
        if identity is not None and recorded is not None:
            check_index_identity(str(self.path), recorded, identity)

    def write_tail(
        self, item: FileWrite, tail: FileTail, identity: EmbedderIdentity | None = None
    ) -> bool:
        """Write the end of a file (``FileTail``): only its rows from the tail's lines on
        are read and rewritten, in one transaction; False when the file is no longer
        indexed as ``tail.base_sha256`` (another process wrote it): nothing is written."""
        self._check_vectors(item.vectors is not None, identity)

        def write(conn: sqlite3.Connection) -> bool:
            tokens = Tokens(rows.tokenizer_of(conn))
            known = EmbedderIdentity.from_meta(rows.read_meta(conn))
            cache = identity is not None
            return writes.write_tail(conn, item, tail, known, cache, tokens) is not None

        return self._write(write)

    def move_files(self, moves: Sequence[tuple[FileKey, FileStamp]]) -> list[FileKey]:
        """Rename files (same content): units keep their text, ids and vectors. Returns the
        old keys no longer in the index (moved or deleted by another process first)."""
        if not moves:
            return []
        return self._write(
            lambda c: [old for old, new in moves if not writes.move_file(c, old, new)]
        )

    def delete_files(self, keys: Sequence[FileKey]) -> None:
        """Remove files and their units and vectors from the index."""

        def delete(conn: sqlite3.Connection) -> None:
            for key in keys:
                writes.delete_file(conn, key)

        if keys:
            self._write(delete)

    def update_stamps(self, stamps: Sequence[FileStamp]) -> None:
        """Record a new size/mtime for files whose content hash did not change."""
        if stamps:
            self._write(lambda c: writes.update_stamps(c, stamps))

    def files_missing_vectors(self, sources: Sequence[str]) -> set[FileKey]:
        """Files of ``sources`` with units that have no vector (written keyword-only).

        Costs one meta read unless a keyword-only write was recorded for a source.
        """
        meta = self._meta()
        flagged = [s for s in sources if f"vectors_incomplete:{s}" in meta]
        if not flagged or EmbedderIdentity.from_meta(meta) is None:
            return set()
        return self._read(lambda c: rows.files_missing_vectors(c, flagged))

    def mark_vectors_complete(self, sources: Sequence[str]) -> None:
        """Forget the keyword-only marks of ``sources`` (after a sync with an embedder)."""
        keys = [(f"vectors_incomplete:{s}",) for s in sources]
        if any(k in self._meta() for (k,) in keys):
            self._write(lambda c: c.executemany("DELETE FROM meta WHERE key = ?", keys))

    def cached_vectors(
        self, identity: EmbedderIdentity, hashes: Iterable[str]
    ) -> dict[str, Vector]:
        """Vectors from the embedding cache for these text hashes (misses are absent)."""
        return self._read(lambda c: rows.cached_vectors(c, identity, hashes))

    def clear(self, *, keep_cache: bool = True, tokenizer: str | None = None) -> None:
        """Empty the index (files, units, vectors, identity); optionally switch the tokenizer."""
        if tokenizer is not None and tokenizer not in TOKENIZERS:
            raise InvalidInputError(
                f"unknown tokenizer {tokenizer!r}; use one of {sorted(TOKENIZERS)}"
            )

        self._write(lambda c: writes.clear(c, keep_cache, tokenizer))
        remove_other_files(self.path, "*", None)  # every kind's graph: its tag is gone

    def optimize(self, progress: Callable[[str], None] | None = None) -> list[str]:
        """Build the vector graph of each unit kind that needs one; returns the kinds built.

        Reads each kind's vectors from the table in one read transaction on a connection
        of its own (``graph.build_graphs``); takes minutes at a million rows on two cores.
        Searches in other processes keep using what they have until the new tag commits.
        """
        if self.graph_min_rows <= 0 or self.identity is None:
            return []
        started = time.perf_counter()
        built = build_graphs(self.path, self.graph_min_rows, progress, self._write)
        if built:
            log.info("vector graphs of %s built in %.1f s", built, time.perf_counter() - started)
        return built

    def stats(self) -> IndexStats:
        counts, meta, tags = self._read(lambda c: (rows.counts(c), rows.read_meta(c), read_tags(c)))
        db = self._conn()
        return IndexStats(
            files=counts["files"],
            chunks=counts["chunks"],
            blocks=counts["blocks"],
            vectors=counts["vectors"],
            cached_embeddings=counts["cache"],
            identity=EmbedderIdentity.from_meta(meta),
            vector_backend="numpy",
            db_path=str(self.path),
            extra={
                "tokenizer": meta.get("tokenizer", "porter"),
                "driver": db.driver,
                "vector_memory_bytes": self.vectors.nbytes,
                "vector_full_loads": self.vectors.full_loads,
                "keyword_memory_bytes": self.keywords.nbytes,
                "keyword_full_loads": self.keywords.full_loads,
                "vector_graphs": {kind: tag.rows for kind, tag in tags.items()},
            },
        )
