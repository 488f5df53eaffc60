"""The PostgreSQL + pgvector index store: an ``IndexWriter`` shared by many hosts.

Open it with ``PostgresStore.open(dsn, schema="memdir")`` or ``with PostgresStore(dsn)``;
``__init__`` only stores its arguments. Each store lives in one PostgreSQL schema
(tests use one schema each); the pgvector extension is created on first use.

Keywords are ranked by the SQLite backend's BM25 over FTS5 tokens kept in a
``tsvector`` column with a GIN index (``bm25.py``); vectors live in a
``vector(dimensions)`` table searched by an exact scan, or through an HNSW index
with ``vector_index="hnsw"`` (approximate, much faster at millions of units).
Many processes may write at once: see ``connect.py`` for the locking rules, and
:meth:`PostgresStore.sync_lock` to serialise whole syncs of the same sources.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from memdir.errors import IndexMismatchError, InvalidInputError, StoreError
from memdir.store.contracts import (
    Around,
    EmbedderIdentity,
    FileKey,
    FileStamp,
    FileWrite,
    IndexStats,
    KeywordQuery,
    ScoredId,
    Unit,
    UnitKind,
)
from memdir.store.identity import REBUILD_HINT, check_index_identity, check_query_dimensions
from memdir.store.postgres import bm25, reads
from memdir.store.postgres import schema as ddl
from memdir.store.postgres import writes as writes_sql
from memdir.store.postgres.connect import (
    Connections,
    check_schema_name,
    describe_dsn,
    lock_key,
    lock_schema,
    run_retrying,
    take_locks,
    translate_errors,
)
from memdir.store.postgres.terms import Fts5Terms

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)
VectorIndexKind = Literal["exact", "hnsw"]
T = TypeVar("T")
EXACT_SCAN_MAX = 50_000  # units of a kind in scope that a vector search scans exactly
_ERRORS = "index database"  # what a driver error is reported as
_IDENTITY_KEYS = ("identity_provider", "identity_model", "identity_dimensions")


class PostgresStore:
    """The scale-out index store (an ``IndexWriter``).

    ``tokenizer`` is ``"porter"`` (english stemming) or ``"trigram"`` (CJK and
    substrings); ``None`` accepts whatever the index was built with. ``identity``,
    when given, is checked before vectors are searched. ``vector_index`` is
    ``"exact"`` (a scan, exact cosine order) or ``"hnsw"`` (creates the HNSW index
    and searches through it). ``pool_size > 1`` uses ``psycopg_pool``.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "memdir",
        tokenizer: str | None = "porter",
        identity: EmbedderIdentity | None = None,
        vector_index: VectorIndexKind = "exact",
        pool_size: int = 1,
        connect_timeout: float = 10.0,
    ) -> None:
        self.dsn = dsn
        self.schema = schema
        self.requested_tokenizer = tokenizer
        self.expected_identity = identity
        self.vector_index: VectorIndexKind = vector_index
        self._db = Connections(dsn, schema, pool_size, connect_timeout)
        self._tokenizers: dict[str, Fts5Terms] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        dsn: str,
        *,
        schema: str = "memdir",
        tokenizer: str | None = "porter",
        identity: EmbedderIdentity | None = None,
        vector_index: VectorIndexKind = "exact",
        pool_size: int = 1,
    ) -> PostgresStore:
        """Connect, create the schema and extension if needed, migrate, check the tokenizer."""
        store = cls(
            dsn,
            schema=schema,
            tokenizer=tokenizer,
            identity=identity,
            vector_index=vector_index,
            pool_size=pool_size,
        )
        store.connect()
        return store

    @property
    def location(self) -> str:
        """Where the index lives, without the password: for messages and stats."""
        return f"{describe_dsn(self.dsn)}#{self.schema}"

    def connect(self) -> None:
        if self._db.is_open:
            return
        self._validate()
        ddl.start_with_extension(self._db, self.location, _ERRORS, self._prepare_schema)

    def _validate(self) -> None:
        check_schema_name(self.schema)
        if self.requested_tokenizer is not None and self.requested_tokenizer not in (
            ddl.TOKENIZERS
        ):
            raise InvalidInputError(
                f"unknown tokenizer {self.requested_tokenizer!r}; use one of {ddl.TOKENIZERS}"
            )
        if self.vector_index not in ("exact", "hnsw"):
            raise InvalidInputError(
                f"unknown vector index {self.vector_index!r}; use 'exact' or 'hnsw'"
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> PostgresStore:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def delete(dsn: str, schema: str = "memdir") -> None:
        """Drop the index schema with everything in it (the rebuild counterpart of a file)."""
        store = PostgresStore(dsn, schema=check_schema_name(schema))
        conn = store._db.open_raw()
        try:
            with store._translated(), conn.transaction():
                lock_schema(conn, schema)
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            conn.close()

    def _prepare_schema(self) -> None:
        def migrate(conn: psycopg.Connection[Any]) -> None:
            ddl.ensure_schema(conn, self.schema)
            ddl.apply_migrations(conn, self.schema)
            if ddl.recorded_tokenizer(conn) is None:
                ddl.record_tokenizer(conn, self.requested_tokenizer or "porter")

        def outdated(conn: psycopg.Connection[Any]) -> bool:
            if not ddl.has_relation(conn, self.schema, "meta"):
                return True
            return ddl.recorded_tokenizer(conn) is None or bool(
                ddl.pending_migrations(conn, self.schema)
            )

        if self._read(outdated):
            self._write(migrate, exclusive=True)
        recorded, wanted = self.tokenizer, self.requested_tokenizer
        if wanted is not None and recorded != wanted:
            if self._read(lambda c: c.execute("SELECT 1 FROM units LIMIT 1").fetchone()) is None:
                self._write(lambda c: ddl.record_tokenizer(c, wanted), exclusive=True)
            else:
                raise IndexMismatchError(
                    f"the index {self.location!r} was built with the {recorded!r} tokenizer, "
                    f"not {wanted!r}; {REBUILD_HINT} to rebuild it with {wanted!r}"
                )
        if self.vector_index == "hnsw":
            self._ensure_hnsw()

    def _ensure_hnsw(self) -> None:
        def missing(conn: psycopg.Connection[Any]) -> bool:
            has_table = ddl.has_relation(conn, self.schema, "unit_vectors")
            return has_table and not ddl.has_hnsw(conn, self.schema)

        if self._read(missing):
            self._write(lambda c: ddl.create_hnsw(c) if missing(c) else None, exclusive=True)

    # -- transactions ------------------------------------------------------------------------

    def _translated(self) -> AbstractContextManager[None]:
        return translate_errors(self.location, _ERRORS)

    def _read(self, fn: Callable[[psycopg.Connection[Any]], T]) -> T:
        with self._translated(), self._db.connection() as conn:
            return run_retrying(lambda: fn(conn))

    def _write(
        self,
        fn: Callable[[psycopg.Connection[Any]], T],
        sources: Sequence[str] = (),
        *,
        exclusive: bool = False,
    ) -> T:
        """Run ``fn`` in one transaction holding the advisory locks; retried on deadlock."""

        def attempt(conn: psycopg.Connection[Any]) -> T:
            with conn.transaction():
                if exclusive:
                    lock_schema(conn, self.schema)
                else:
                    take_locks(conn, self.schema, sources)
                return fn(conn)

        with self._translated(), self._db.connection() as conn:
            return run_retrying(lambda: attempt(conn))

    @contextmanager
    def sync_lock(self, sources: Sequence[str]) -> Iterator[None]:
        """Hold a session advisory lock per source for a whole sync (other hosts wait).

        Optional: every write is safe without it. With it, a second process syncing the
        same sources waits and then finds the index current, so nothing is embedded twice.
        """
        conn = self._db.open_raw()
        keys = sorted({lock_key("memdir-sync", self.schema, s) for s in sources})
        try:
            with self._translated():
                for key in keys:
                    conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            yield
        finally:
            conn.close()  # closing the session releases its advisory locks

    # -- meta and identity -------------------------------------------------------------------

    def _meta(self) -> dict[str, str]:
        return self._read(reads.read_meta)

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
        if recorded is not None:
            check_index_identity(self.location, recorded, identity)
            return

        def bind(conn: psycopg.Connection[Any]) -> None:
            recorded = EmbedderIdentity.from_meta(reads.read_meta(conn))
            if recorded is not None:
                check_index_identity(self.location, recorded, identity)
                return
            values = (identity.provider, identity.model, str(identity.dimensions))
            for key, value in zip(_IDENTITY_KEYS, values, strict=True):
                conn.execute("INSERT INTO meta (key, value) VALUES (%s, %s)", (key, value))
            ddl.create_vectors(conn, identity.dimensions)
            if self.vector_index == "hnsw":
                ddl.create_hnsw(conn)
            for (source,) in conn.execute("SELECT DISTINCT source FROM files").fetchall():
                writes_sql.mark_incomplete(conn, str(source))  # written before any embedder

        self._write(bind, exclusive=True)

    def _vector_identity(self, query_dims: int | None = None) -> EmbedderIdentity | None:
        recorded = self.identity
        if recorded is None:
            return None
        if self.expected_identity is not None:
            check_index_identity(self.location, recorded, self.expected_identity)
        if query_dims is not None:
            check_query_dimensions(self.location, recorded, query_dims)
        return recorded

    # -- IndexReader (what search reads) ------------------------------------------------------

    def keyword_search(
        self, query: KeywordQuery, sources: Sequence[str], kinds: Sequence[UnitKind], limit: int
    ) -> dict[UnitKind, list[ScoredId]]:
        """SQLite's BM25 over a bounded pool of candidates (``bm25.py``): the best ``limit``
        of each kind, ``score`` >= 0, higher is better, ties by the lower unit id."""
        wanted = list(dict.fromkeys(kinds))
        if not sources or limit <= 0 or not query or not wanted:
            return {kind: [] for kind in wanted}

        def rank(conn: psycopg.Connection[Any]) -> dict[UnitKind, list[tuple[int, float]]]:
            tokens = self._terms(ddl.recorded_tokenizer(conn) or "porter").of_query(query)
            found, search = bm25.rank(conn, tokens, sources, wanted, limit)
            if not search.exact:
                log.debug("keyword ranking over a pool: %d regions read", search.regions)
            return found

        found = self._read(rank)
        return {k: [ScoredId(uid, max(0.0, score)) for uid, score in found[k]] for k in wanted}

    def keyword_coverage(self, query: KeywordQuery, unit_ids: Sequence[int]) -> dict[int, float]:
        """For each unit, the share of the query's information it holds (its tokens'
        ``smoothed_idf`` over all of the query's), as the SQLite backend measures it."""
        ids = list(dict.fromkeys(unit_ids))
        if not ids or not query:
            return dict.fromkeys(ids, 0.0)

        def measure(conn: psycopg.Connection[Any]) -> dict[int, float]:
            tokens = self._terms(ddl.recorded_tokenizer(conn) or "porter").of_query(query)
            return bm25.coverage(conn, tokens, ids)

        return self._read(measure)

    def _terms(self, tokenizer: str) -> Fts5Terms:
        """This store's FTS5 tokenizer for ``tokenizer`` (made once, then shared)."""
        found = self._tokenizers.get(tokenizer)
        if found is None:
            found = self._tokenizers.setdefault(tokenizer, Fts5Terms(tokenizer))
        return found

    def vector_search(
        self, query: npt.NDArray[np.float32], sources: Sequence[str], kind: UnitKind, limit: int
    ) -> list[ScoredId]:
        """Nearest units by cosine similarity (``score`` in [-1, 1]); [] in keyword-only mode."""
        if not sources or limit <= 0:
            return []
        if self._vector_identity(int(np.asarray(query).shape[-1])) is None:
            return []
        hnsw = self.vector_index == "hnsw"

        def find(conn: psycopg.Connection[Any]) -> list[ScoredId]:
            # A scope small enough is scanned exactly, through the (kind, source) index:
            # faster than the graph, which would skip past other workspaces' vectors.
            graph = hnsw and reads.scope_units(conn, sources, kind) > EXACT_SCAN_MAX
            return reads.vector_search(conn, query, sources, kind, limit, graph)

        return self._read(find)

    def get_units(self, ids: Iterable[int]) -> dict[int, Unit]:
        wanted = list(dict.fromkeys(ids))
        return self._read(lambda c: reads.get_units(c, wanted)) if wanted else {}

    def blocks_around(self, ids: Sequence[int], reach: int) -> dict[int, Around]:
        wanted = list(dict.fromkeys(ids))
        return self._read(lambda c: reads.blocks_around(c, wanted, reach)) if wanted else {}

    def get_vectors(self, ids: Iterable[int]) -> dict[int, npt.NDArray[np.float32]]:
        wanted = list(dict.fromkeys(ids))
        if not wanted or self._vector_identity() is None:
            return {}
        return self._read(lambda c: reads.get_vectors(c, wanted))

    def count_files(self, sources: Sequence[str]) -> int:
        if not sources:
            return 0
        sql = (
            "SELECT count(*) FROM files f WHERE f.source = ANY(%s) "
            "AND EXISTS (SELECT 1 FROM units u WHERE u.file_id = f.id)"
        )
        return int(self._read(lambda c: c.execute(sql, (list(sources),)).fetchone()[0]))  # type: ignore[index]

    # -- writer methods (used by memdir.index) -----------------------------------------------

    def file_stamps(self, sources: Sequence[str]) -> dict[FileKey, FileStamp]:
        """Every indexed file of ``sources`` in one query."""
        if not sources:
            return {}
        sql = "SELECT source, path, sha256, size, mtime_ns FROM files WHERE source = ANY(%s)"
        rows = self._read(lambda c: c.execute(sql, (list(sources),)).fetchall())
        return {(r[0], r[1]): FileStamp(r[0], r[1], r[2], int(r[3]), int(r[4])) for r in rows}

    def write_files(
        self, writes: Sequence[FileWrite], identity: EmbedderIdentity | None = None
    ) -> int:
        """Replace the units (and vectors) of each file in one transaction; returns units written.

        With ``identity``, the vectors also enter the embedding cache under each unit's sha256.
        """
        if not writes:
            return 0
        recorded = self.identity
        if any(w.vectors is not None for w in writes) and recorded is None:
            raise StoreError("vectors given but no embedder identity is bound; call bind_identity")
        if identity is not None and recorded is not None:
            check_index_identity(self.location, recorded, identity)

        def write(conn: psycopg.Connection[Any]) -> int:
            meta = reads.read_meta(conn)
            terms = self._terms(meta.get("tokenizer", "porter"))
            has_index = EmbedderIdentity.from_meta(meta) is not None
            return writes_sql.write_files(conn, writes, has_index, identity, terms)

        return self._write(write, sorted({w.stamp.source for w in writes}))

    def move_files(self, moves: Sequence[tuple[FileKey, FileStamp]]) -> list[FileKey]:
        """Rename files (same content): units keep their text, ids and vectors.

        Returns the old keys that were no longer in the index (another process moved or
        deleted them first); the caller writes those files afresh.
        """
        if not moves:
            return []
        sources = sorted({old[0] for old, _ in moves} | {new.source for _, new in moves})

        def move(conn: psycopg.Connection[Any]) -> list[FileKey]:
            return [old for old, new in moves if not writes_sql.move_file(conn, old, new)]

        return self._write(move, sources)

    def delete_files(self, keys: Sequence[FileKey]) -> None:
        """Remove files and their units and vectors from the index."""
        if keys:
            self._write(lambda c: writes_sql.delete_files(c, keys), sorted({k[0] for k in keys}))

    def update_stamps(self, stamps: Sequence[FileStamp]) -> None:
        """Record a new size/mtime for files whose content hash did not change."""
        if stamps:
            sources = sorted({s.source for s in stamps})
            self._write(lambda c: writes_sql.update_stamps(c, stamps), sources)

    def files_missing_vectors(self, sources: Sequence[str]) -> set[FileKey]:
        """Files of ``sources`` with units that have no vector (written keyword-only)."""
        meta = self._meta()
        flagged = [s for s in sources if f"vectors_incomplete:{s}" in meta]
        if not flagged or EmbedderIdentity.from_meta(meta) is None:
            return set()
        return self._read(lambda c: reads.units_without_vectors(c, flagged))

    def mark_vectors_complete(self, sources: Sequence[str]) -> None:
        """Forget the keyword-only marks of ``sources`` (after a sync with an embedder)."""
        keys = [f"vectors_incomplete:{s}" for s in sources]
        if any(k in self._meta() for k in keys):
            sql = "DELETE FROM meta WHERE key = ANY(%s)"
            self._write(lambda c: c.execute(sql, (keys,)), sorted(set(sources)))

    def optimize(self, progress: Callable[[str], None] | None = None) -> list[str]:
        """Nothing to do: PostgreSQL keeps its HNSW index (``vector_index = "hnsw"``) itself."""
        return []

    def cached_vectors(
        self, identity: EmbedderIdentity, hashes: Iterable[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Vectors from the embedding cache for these text hashes (misses are absent)."""
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        args = (identity.provider, identity.model, identity.dimensions, wanted)
        return self._read(lambda c: reads.cached_vectors(c, *args))

    def clear(self, *, keep_cache: bool = True, tokenizer: str | None = None) -> None:
        """Empty the index (files, units, vectors, identity); optionally switch the tokenizer."""
        if tokenizer is not None and tokenizer not in ddl.TOKENIZERS:
            raise InvalidInputError(f"unknown tokenizer {tokenizer!r}; use one of {ddl.TOKENIZERS}")

        def clear(conn: psycopg.Connection[Any]) -> None:
            conn.execute("DROP TABLE IF EXISTS unit_vectors")
            conn.execute("TRUNCATE units, files, term_counts, source_counts")
            if not keep_cache:
                conn.execute("TRUNCATE embedding_cache")
            conn.execute(
                "DELETE FROM meta WHERE key LIKE 'identity\\_%' OR key = 'vector_backend' "
                "OR key LIKE 'vectors\\_incomplete:%'"
            )
            if tokenizer is not None:
                ddl.record_tokenizer(conn, tokenizer)

        self._write(clear, exclusive=True)

    def stats(self) -> IndexStats:
        return self._read(
            lambda c: reads.index_stats(c, self.schema, self.location, self.vector_index)
        )
