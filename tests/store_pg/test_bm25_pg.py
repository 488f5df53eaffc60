"""PostgreSQL's keyword ranking is the SQLite backend's BM25, over a bounded pool."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from pgserver_support import TestServer

from keyword_support import words
from memdir.store import FileStamp, FileWrite, KeywordQuery, SqliteStore, Unit, UnitKind
from memdir.store.postgres import PostgresStore, bm25
from memdir.store.postgres import schema as ddl

VOCABULARY = [
    "tea", "green", "deploy", "deployed", "deploying", "python", "café", "Cafe", "it's",
    "foo_bar", "the", "and", "x" * 300, "東京都", "naïve", "über",
] + [f"w{n}" for n in range(40)]  # fmt: skip
QUERIES = [
    "tea green",
    "deploy python w3",
    "tea tea green",
    "the and w1",
    "foo_bar cafe",
    "naive uber",
    "x" * 300,
    "zebra tea",
    "zebra",
    "東京都",
]
Key = tuple[str, str, str, int]


def _file(rng: random.Random, source: str, path: str, version: int) -> FileWrite:
    units = []
    for i in range(rng.randint(3, 12)):
        text = " ".join(rng.choices(VOCABULARY, k=rng.randint(1, 25)))
        heading = tuple(rng.choices(VOCABULARY, k=rng.randint(0, 2)))
        kind: UnitKind = "chunk" if i % 4 == 0 else "block"
        units.append(Unit(source, path, kind, i + 1, i + 1, text, heading))
    return FileWrite(FileStamp(source, path, f"{version:064}", 1, 1), units)


def _history(seed: int = 7) -> list[tuple[str, Any]]:
    """Writes, rewrites, a move and deletes over two sources, as store calls."""
    rng = random.Random(seed)
    keys = [("global" if n % 3 else "agent:a", f"memory/f{n}.md") for n in range(30)]
    calls: list[tuple[str, Any]] = [("write_files", [_file(rng, s, p, 1) for s, p in keys])]
    calls.append(("write_files", [_file(rng, s, p, 2) for s, p in keys[::4]]))
    calls.append(("delete_files", keys[1::5]))
    calls.append(("move_files", [(keys[2], FileStamp("global", "moved.md", "m" * 64, 1, 1))]))
    return calls


@pytest.fixture
def stores(pg_server: TestServer, pg_schema: str, tmp_path: Any) -> Iterator[tuple[Any, Any]]:
    """The same history written to a SQLite store and a PostgreSQL one."""
    lite = SqliteStore.open(tmp_path / "index.db")
    pg = PostgresStore.open(pg_server.dsn, schema=pg_schema)
    for name, argument in _history():
        getattr(lite, name)(argument)
        getattr(pg, name)(argument)
    yield lite, pg
    lite.close()
    pg.close()


def _keyed(store: Any, query: KeywordQuery, sources: list[str], limit: int) -> dict[str, Any]:
    found = store.keyword_search(query, sources, ("block", "chunk"), limit)
    units = store.get_units(h.unit_id for hits in found.values() for h in hits)

    def key(unit_id: int) -> Key:
        u = units[unit_id]
        return (u.source, u.path, u.kind, u.start_line)

    return {kind: [(key(h.unit_id), h.score) for h in hits] for kind, hits in found.items()}


def test_scores_equal_sqlite_bm25_bit_for_bit(stores: tuple[Any, Any]) -> None:
    lite, pg = stores
    checked = 0
    for text in QUERIES:
        for sources in (["global", "agent:a"], ["agent:a"], ["global"]):
            want = _keyed(lite, words(text), sources, 10_000)
            got = _keyed(pg, words(text), sources, 10_000)
            for kind in ("block", "chunk"):
                assert dict(got[kind]) == dict(want[kind]), (text, sources, kind)
                checked += len(want[kind])
            for limit in (1, 5, 17):  # ties may fall either side of the cut, scores may not
                short = _keyed(pg, words(text), sources, limit)
                for kind in ("block", "chunk"):
                    assert [s for _, s in short[kind]] == [s for _, s in want[kind][:limit]]
    assert checked > 500


def test_coverage_equals_sqlite(stores: tuple[Any, Any]) -> None:
    lite, pg = stores
    measured = 0
    for text in QUERIES:
        query = words(text)
        shares = []
        for store in (lite, pg):
            ranked = store.keyword_search(query, ["global", "agent:a"], ("block",), 10_000)
            found = store.keyword_coverage(query, [h.unit_id for h in ranked["block"]])
            shares.append(sorted(found.values()))
        assert shares[0] == shares[1], text
        measured += len(shares[0])
    assert measured > 100
    assert pg.keyword_coverage(KeywordQuery(()), [1, 2]) == {1: 0.0, 2: 0.0}


def _connect(dsn: str, schema: str) -> Any:
    import psycopg

    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute(f'SET search_path = "{schema}", public')
    return conn


def _common_words(pg_server: TestServer, pg_schema: str) -> PostgresStore:
    """Units of a few words of falling frequency: a query matches many units."""
    rng = random.Random(3)
    common = ["alpha", "beta", "gamma", "delta", "kiwi", "lime", "mango", "nut"]
    writes = []
    for f in range(40):
        source = "global" if f % 4 else "agent:b"
        units = [
            Unit(source, f"f{f}.md", "chunk" if i % 3 == 0 else "block", i + 1, i + 1,
                 " ".join(rng.choices(common, [8, 6, 5, 4, 3, 2, 2, 1], k=rng.randint(1, 4))))
            for i in range(25)
        ]  # fmt: skip
        writes.append(FileWrite(FileStamp(source, f"f{f}.md", str(f), 1, 1), units))
    store = PostgresStore.open(pg_server.dsn, schema=pg_schema)
    store.write_files(writes)
    return store


def test_a_small_pool_walks_regions_and_stays_exact_until_it_says_not(
    pg_server: TestServer, pg_schema: str
) -> None:
    store = _common_words(pg_server, pg_schema)
    conn = _connect(pg_server.dsn, pg_schema)
    kinds: list[UnitKind] = ["block", "chunk"]
    walked = exact_walks = 0
    try:
        queries = (["alpha", "beta"], ["kiwi", "gamma", "alpha", "alpha"], ["delta", "lime"])
        for tokens in queries:
            for sources in (["global", "agent:b"], ["agent:b"]):
                full, everything = bm25.rank(conn, tokens, sources, kinds, 10, pool=100_000)
                assert everything.exact
                assert everything.regions == 1
                small, search = bm25.rank(conn, tokens, sources, kinds, 10, pool=60)
                walked += search.regions > 1
                if search.exact:
                    exact_walks += search.regions > 1
                    assert small == full, (tokens, sources)
                capped, few = bm25.rank(conn, tokens, sources, kinds, 10, pool=60, max_regions=1)
                assert few.regions <= 2
                assert capped == full or not few.exact  # never claims what it did not read
    finally:
        conn.close()
        store.close()
    assert walked
    assert exact_walks


def test_statistics_follow_every_write_path(stores: tuple[Any, Any]) -> None:
    """The trigger-kept counts equal counts taken from the units, after rewrites,
    a move, deletes by cascade and a clear."""
    _, pg = stores
    conn = _connect(pg.dsn, pg.schema)
    recount_terms = (
        "SELECT x.lexeme, u.source, count(*) FROM units u, unnest(u.terms) x GROUP BY 1, 2"
    )
    recount_units = "SELECT source, kind, count(*), sum(length) FROM units GROUP BY 1, 2"
    kept_terms = "SELECT term, source, units FROM term_counts WHERE units <> 0"
    kept_units = "SELECT source, kind, units, tokens FROM source_counts WHERE units <> 0"
    try:
        assert set(conn.execute(recount_terms).fetchall()) == set(
            conn.execute(kept_terms).fetchall()
        )
        assert set(conn.execute(recount_units).fetchall()) == set(
            conn.execute(kept_units).fetchall()
        )
        pg.clear(tokenizer="trigram")
        assert conn.execute(kept_units).fetchall() == []
        assert ddl.recorded_tokenizer(conn) == "trigram"
    finally:
        conn.close()


def test_an_index_of_the_ts_rank_era_migrates_and_resyncs(
    pg_server: TestServer, pg_schema: str, tmp_path: Any
) -> None:
    """An index written before m003 (a generated ``fts`` column) loses it, keeps its
    tokenizer, and its files are re-chunked at the next sync, which gives them terms."""
    from memdir.index import SourceFile, sync_files

    conn = _connect(pg_server.dsn, pg_schema)
    try:
        conn.execute(f'CREATE SCHEMA "{pg_schema}"')
        old = ddl.MigrationPlan("migrations", ddl.MIGRATIONS[:2], "", "")
        with conn.transaction():
            ddl.apply_migrations(conn, pg_schema, old)
            conn.execute(
                "ALTER TABLE units ADD COLUMN fts tsvector GENERATED ALWAYS AS "
                "(to_tsvector('english'::regconfig, text)) STORED"
            )
            conn.execute("INSERT INTO meta VALUES ('tokenizer', 'porter')")
            conn.execute(
                "INSERT INTO files (source, path, sha256, size, mtime, mtime_ns) "
                "VALUES ('global', 'a.md', 'old', 10, 1, 1)"
            )
            conn.execute(
                "INSERT INTO units (file_id, source, path, kind, start_line, end_line, text) "
                "SELECT id, 'global', 'a.md', 'block', 1, 1, 'green tea' FROM files"
            )
        with PostgresStore.open(pg_server.dsn, schema=pg_schema) as store:
            assert store.tokenizer == "porter"
            assert store.file_stamps(["global"])[("global", "a.md")].sha256 == ""
            note = tmp_path / "a.md"
            note.write_text("# Tea\n\n- Ana prefers green tea\n", encoding="utf-8")
            sync_files(store, None, [SourceFile("global", "a.md", note)], sources=["global"])
            hits = store.keyword_search(words("green"), ["global"], ("block",), 5)["block"]
            assert hits
            assert "green tea" in store.get_units([hits[0].unit_id])[hits[0].unit_id].text
        columns = {r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = %s AND table_name = 'units'", (pg_schema,)
        ).fetchall()}  # fmt: skip
        assert "fts" not in columns
        assert conn.execute("SELECT sum(units) FROM source_counts").fetchone()[0] >= 1
    finally:
        conn.close()
