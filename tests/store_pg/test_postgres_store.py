"""What only the PostgreSQL store has: schemas, HNSW, backend choice, locks, query translation."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from pgserver_support import TestServer

from memdir.embeddings.base import HashEmbedder
from memdir.errors import ConfigError, InvalidInputError, StoreError
from memdir.index import SourceFile, sync_files
from memdir.store import SqliteStore
from memdir.store.open import StoreOptions, open_backend
from memdir.store.postgres import PostgresStore
from memdir.store.postgres.fulltext import websearch_text


def _notes(root: Path, count: int = 30) -> list[SourceFile]:
    root.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (root / f"n{n:02}.md").write_text(f"# note {n}\n\ntopic{n} shared words here\n")
    return [SourceFile("global", p.name, p) for p in sorted(root.glob("*.md"))]


def test_websearch_text_quotes_each_term_as_a_phrase() -> None:
    phrases = ["tea", 'green "leaf"', "e-mail"]
    assert websearch_text(phrases) == '"tea" or "green leaf" or "e mail"'


def test_hnsw_index_finds_the_nearest(
    pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    embedder = HashEmbedder(32)
    with PostgresStore.open(pg_server.dsn, schema=pg_schema, vector_index="hnsw") as store:
        sync_files(store, embedder, _notes(tmp_path / "ws"), sources=["global"])
        assert store.stats().vector_backend == "pgvector-hnsw"
        query = embedder.embed_query("note 7\ntopic7 shared words here")
        hits = store.vector_search(query, ["global"], "block", 5)
        best = store.get_units([hits[0].unit_id])[hits[0].unit_id]
        assert best.text == "topic7 shared words here"
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    with PostgresStore.open(pg_server.dsn, schema=pg_schema) as exact:
        exact_hits = exact.vector_search(query, ["global"], "block", 5)
        assert exact_hits[0] == hits[0]


def test_hnsw_graphs_are_one_per_kind_and_replace_the_shared_one(
    pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    """A chunk search walks a graph of chunks only; an index made with the one graph of
    both kinds gets the per-kind graphs when opened with ``vector_index="hnsw"``."""
    import psycopg

    from memdir.store.postgres import reads
    from memdir.store.postgres import schema as ddl

    embedder = HashEmbedder(32)
    with PostgresStore.open(pg_server.dsn, schema=pg_schema) as store:
        sync_files(store, embedder, _notes(tmp_path / "ws"), sources=["global"])
    with psycopg.connect(pg_server.dsn, autocommit=True) as conn:
        conn.execute(f'SET search_path = "{pg_schema}", public')
        conn.execute(
            f"CREATE INDEX {ddl.OLD_HNSW_INDEX} ON unit_vectors USING hnsw "
            "(embedding vector_cosine_ops)"
        )
        with PostgresStore.open(pg_server.dsn, schema=pg_schema, vector_index="hnsw") as store:
            assert store.stats().vector_backend == "pgvector-hnsw"
        assert not ddl.has_relation(conn, pg_schema, ddl.OLD_HNSW_INDEX)
        query = embedder.embed_query("note 7\ntopic7 shared words here")
        from pgvector.psycopg import register_vector

        register_vector(conn)
        conn.execute("SET enable_seqscan = off")  # a tiny table: make the planner show its index
        plan = conn.execute(
            "EXPLAIN " + reads._NEAREST.format(kind="chunk"), (query, ["global"], query, 5)
        ).fetchall()
        assert ddl.HNSW_INDEXES["chunk"] in str(plan)
        hits = reads.vector_search(conn, query, ["global"], "chunk", 5, hnsw=True)
        assert hits
        units = reads.get_units(conn, [h.unit_id for h in hits])
        assert {u.kind for u in units.values()} == {"chunk"}


def test_schemas_are_isolated(pg_server: TestServer, pg_schema: str, tmp_path: Path) -> None:
    other = pg_schema + "_b"
    try:
        with (
            PostgresStore.open(pg_server.dsn, schema=pg_schema) as one,
            PostgresStore.open(pg_server.dsn, schema=other) as two,
        ):
            sync_files(one, None, _notes(tmp_path / "ws", 3), sources=["global"])
            assert one.count_files(["global"]) == 3
            assert two.count_files(["global"]) == 0
    finally:
        PostgresStore.delete(pg_server.dsn, other)


def test_bad_schema_name_and_unreachable_server() -> None:
    with pytest.raises(InvalidInputError, match="schema name"):
        PostgresStore.open("postgresql://x@/db?host=/nonexistent", schema="Bad-Name")
    with pytest.raises(StoreError, match="cannot connect"):
        PostgresStore.open("postgresql://x@/db?host=/nonexistent/socket/dir")


def test_unknown_migration_is_refused(pg_server: TestServer, pg_schema: str) -> None:
    with PostgresStore.open(pg_server.dsn, schema=pg_schema) as store:
        store._write(lambda c: c.execute("INSERT INTO migrations (name) VALUES ('m999_future')"))
    with pytest.raises(StoreError, match="m999_future"):
        PostgresStore.open(pg_server.dsn, schema=pg_schema)


def test_open_backend_picks_the_stores(
    pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    lite = open_backend(StoreOptions(index_dir=tmp_path / "index"))
    with lite.open_index("porter") as index:
        assert isinstance(index, SqliteStore)
    assert lite.database_files == (
        tmp_path / "index" / "memdir.db",
        tmp_path / "index" / "facts.db",
    )
    options = StoreOptions(backend="postgres", dsn=pg_server.dsn, schema=pg_schema)
    shared = open_backend(options)
    with shared.open_index("porter") as pg:
        assert isinstance(pg, PostgresStore)
        assert pg.stats().extra["schema"] == pg_schema
        assert shared.index_beside(pg, "porter") is pg  # PostgreSQL readers never wait
    assert shared.database_files == ()
    with pytest.raises(ConfigError, match=r"store\.dsn"):
        open_backend(StoreOptions(backend="postgres"))
    with pytest.raises(ConfigError, match="unknown store backend"):
        open_backend(StoreOptions(backend="mongo", index_dir=tmp_path))  # type: ignore[arg-type]


def test_sync_lock_serialises_whole_syncs(pg_server: TestServer, pg_schema: str) -> None:
    events: list[str] = []
    with (
        PostgresStore.open(pg_server.dsn, schema=pg_schema) as one,
        PostgresStore.open(pg_server.dsn, schema=pg_schema) as two,
    ):

        def second() -> None:
            with two.sync_lock(["global"]):
                events.append("second")

        with one.sync_lock(["global"]):
            thread = threading.Thread(target=second)
            thread.start()
            time.sleep(0.3)
            events.append("first done")
        thread.join(timeout=10)
        with one.sync_lock(["agent:x"]), two.sync_lock(["global"]):
            events.append("other sources do not wait")
    assert events == ["first done", "second", "other sources do not wait"]
