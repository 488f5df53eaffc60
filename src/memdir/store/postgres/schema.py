"""Schema of the PostgreSQL index: the extension, numbered migrations, full text and vectors.

``MIGRATIONS`` is an ordered list of ``(name, statements)`` recorded in the
``migrations`` table of the store's schema; a migration never changes after it
has shipped, a later feature appends ``m00N_<what>``.

Keyword search (m003) ranks by SQLite's BM25 (``bm25.py``): ``units.terms`` holds
each unit's FTS5 tokens and counts (``terms.py``), ``units.scope`` its source and
kind as lexemes, and one GIN index covers both, so a scoped search intersects its
workspace's postings with the query's inside the index. Triggers keep the BM25
statistics beside the units in the same transaction, whatever the statement:
``source_counts`` (units and tokens per source and kind) and ``term_counts`` (units
holding each term, per source). The tokenizer, ``porter`` or ``trigram``, is
recorded in ``meta``.

The vector table ``unit_vectors`` is not a migration because its ``vector(dimensions)``
column depends on the embedder: it is created when one is first bound, with its
optional HNSW index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memdir.errors import StoreError
from memdir.store.postgres.connect import Connections, import_driver, lock_key, translate_errors

if TYPE_CHECKING:
    import psycopg

TOKENIZERS = ("porter", "trigram")
HNSW_INDEXES = {"chunk": "unit_vectors_hnsw_chunk", "block": "unit_vectors_hnsw_block"}
OLD_HNSW_INDEX = "unit_vectors_hnsw"  # one graph over both kinds, before per-kind graphs
HNSW_BUILD_MEMORY = "1GB"

_M001 = [
    "CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL)",
    """
    CREATE TABLE files (
        id bigserial PRIMARY KEY,
        source text NOT NULL,
        path text NOT NULL,
        sha256 text NOT NULL,
        size bigint NOT NULL,
        mtime double precision NOT NULL,
        mtime_ns bigint NOT NULL,
        UNIQUE (source, path)
    )
    """,
    """
    CREATE TABLE units (
        id bigserial PRIMARY KEY,
        file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        source text NOT NULL,
        path text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('chunk', 'block')),
        start_line integer NOT NULL,
        end_line integer NOT NULL,
        text text NOT NULL,
        heading_path text NOT NULL DEFAULT '',
        sha256 text NOT NULL DEFAULT ''
    )
    """,
    "CREATE INDEX units_file ON units (file_id)",
    "CREATE INDEX units_source_kind ON units (source, kind)",
    """
    CREATE TABLE embedding_cache (
        provider text NOT NULL,
        model text NOT NULL,
        text_sha256 text NOT NULL,
        dimensions integer NOT NULL,
        vector vector NOT NULL,
        PRIMARY KEY (provider, model, text_sha256)
    )
    """,
    """
    CREATE FUNCTION memdir_trigrams(doc text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT array_to_tsvector(coalesce(array_agg(DISTINCT substr(lower(doc), i, 3)), '{}'))
        FROM generate_series(1, length(doc) - 2) AS i
    $$
    """,
]

_M002 = [
    # Re-chunk every file at the next sync: unit texts lost memdir's markers and vectors
    # their headings and list syntax (memdir.index.chunking); the embedding cache stays.
    "UPDATE files SET sha256 = '', size = -1",
]

_M003 = [
    "DROP INDEX IF EXISTS units_fts",
    "ALTER TABLE units DROP COLUMN IF EXISTS fts",
    "ALTER TABLE units ADD COLUMN terms tsvector NOT NULL DEFAULT ''",
    "ALTER TABLE units ADD COLUMN length integer NOT NULL DEFAULT 0",
    "ALTER TABLE units ADD COLUMN scope tsvector GENERATED ALWAYS AS "
    "(array_to_tsvector(ARRAY['s:' || source, 'k:' || kind])) STORED",
    "CREATE INDEX units_terms ON units USING gin (scope, terms)",
    "CREATE TABLE source_counts (source text NOT NULL, kind text NOT NULL, "
    "units bigint NOT NULL, tokens bigint NOT NULL, PRIMARY KEY (source, kind))",
    "CREATE TABLE term_counts (term text NOT NULL, source text NOT NULL, "
    "units bigint NOT NULL, PRIMARY KEY (term, source))",
    "INSERT INTO source_counts SELECT source, kind, count(*), 0 FROM units GROUP BY 1, 2",
    # One function for both triggers: the transition table ``changed`` holds the rows
    # inserted (+1) or deleted (-1, also by the cascade from ``files``).
    """
    CREATE FUNCTION memdir_count_terms() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    DECLARE
        sign bigint := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
    BEGIN
        INSERT INTO source_counts AS c (source, kind, units, tokens)
        SELECT source, kind, sign * count(*), sign * sum(length)
        FROM changed GROUP BY source, kind ORDER BY source, kind
        ON CONFLICT (source, kind) DO UPDATE
        SET units = c.units + excluded.units, tokens = c.tokens + excluded.tokens;
        INSERT INTO term_counts AS c (term, source, units)
        SELECT x.lexeme, u.source, sign * count(*)
        FROM changed u, unnest(u.terms) AS x GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (term, source) DO UPDATE SET units = c.units + excluded.units;
        RETURN NULL;
    END
    $$
    """,
    "CREATE TRIGGER units_counted_in AFTER INSERT ON units REFERENCING NEW TABLE AS changed "
    "FOR EACH STATEMENT EXECUTE FUNCTION memdir_count_terms()",
    "CREATE TRIGGER units_counted_out AFTER DELETE ON units REFERENCING OLD TABLE AS changed "
    "FOR EACH STATEMENT EXECUTE FUNCTION memdir_count_terms()",
    # Re-chunk every file at the next sync: units need their terms.
    "UPDATE files SET sha256 = '', size = -1",
]

MIGRATIONS: list[tuple[str, list[str]]] = [
    ("m001_initial", _M001),
    ("m002_reindex_units", _M002),
    ("m003_bm25_terms", _M003),
    # Search finds the blocks around a block by line (``PostgresStore.blocks_around``).
    ("m004_blocks_by_line", ["CREATE INDEX units_by_line ON units (file_id, kind, start_line)"]),
]


@dataclass(frozen=True)
class MigrationPlan:
    """Numbered migrations and the table of a schema that records the applied ones.

    A recorded migration missing from ``migrations`` means a newer memdir wrote the
    schema: the error says ``{owner} migrations this memdir does not know (...);
    {advice}``.
    """

    table: str
    migrations: Sequence[tuple[str, Sequence[str]]]
    owner: str
    advice: str


INDEX_MIGRATIONS = MigrationPlan(
    "migrations",
    MIGRATIONS,
    owner="the index schema has",
    advice="upgrade memdir or run `memdir index rebuild`",
)


def ensure_extension(conn: psycopg.Connection[Any]) -> str:
    """Create the pgvector extension if missing; return the schema that holds it."""
    driver = import_driver()
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("memdir", "extension"),))
        found = _extension_schema(conn)
        if found is None:
            try:
                with conn.transaction():
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            except driver.Error as exc:
                raise StoreError(
                    f"the pgvector extension is not installed and cannot be created ({exc}); "
                    "ask a database administrator to run `CREATE EXTENSION vector`"
                ) from exc
            found = _extension_schema(conn)
    if found is None:  # pragma: no cover - CREATE EXTENSION succeeded
        raise StoreError("the pgvector extension vanished right after it was created")
    return found


def start_with_extension(
    db: Connections, location: str, what: str, prepare: Callable[[], None]
) -> None:
    """Create pgvector if needed, open ``db`` with its schema and the extension's on the
    search path, then run ``prepare`` (migrations); ``db`` is closed again if that fails."""
    bootstrap = db.open_raw()
    try:
        with translate_errors(location, what):
            extension_schema = ensure_extension(bootstrap)
    finally:
        bootstrap.close()
    db.start(f'"{db.schema}", "{extension_schema}"')
    try:
        prepare()
    except BaseException:
        db.close()
        raise


def _extension_schema(conn: psycopg.Connection[Any]) -> str | None:
    row = conn.execute(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'vector'"
    ).fetchone()
    return None if row is None else str(row[0])


def ensure_schema(conn: psycopg.Connection[Any], schema: str) -> None:
    """Create the schema if missing (the caller holds the exclusive schema lock)."""
    conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')


def pending_migrations(
    conn: psycopg.Connection[Any], schema: str, plan: MigrationPlan = INDEX_MIGRATIONS
) -> list[tuple[str, Sequence[str]]]:
    """Migrations of ``plan`` not yet applied in ``schema`` (all of them for a new one)."""
    done: set[str] = set()
    if has_relation(conn, schema, plan.table):
        done = {str(r[0]) for r in conn.execute(f"SELECT name FROM {plan.table}").fetchall()}
    unknown = done - {name for name, _ in plan.migrations}
    if unknown:
        raise StoreError(
            f"{plan.owner} migrations this memdir does not know ({sorted(unknown)}); {plan.advice}"
        )
    return [(name, sql) for name, sql in plan.migrations if name not in done]


def apply_migrations(
    conn: psycopg.Connection[Any], schema: str, plan: MigrationPlan = INDEX_MIGRATIONS
) -> list[str]:
    """Apply pending migrations inside the caller's transaction; returns their names."""
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {plan.table} (id serial PRIMARY KEY, name text NOT NULL "
        "UNIQUE, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    applied = []
    for name, statements in pending_migrations(conn, schema, plan):
        for statement in statements:
            conn.execute(statement)
        conn.execute(f"INSERT INTO {plan.table} (name) VALUES (%s)", (name,))
        applied.append(name)
    return applied


def has_relation(conn: psycopg.Connection[Any], schema: str, name: str) -> bool:
    """True when a table or index ``name`` exists in ``schema``."""
    row = conn.execute(
        "SELECT to_regclass(format('%%I.%%I', %s::text, %s::text)) IS NOT NULL", (schema, name)
    ).fetchone()
    return bool(row and row[0])


def recorded_tokenizer(conn: psycopg.Connection[Any]) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
    return None if row is None else str(row[0])


def record_tokenizer(conn: psycopg.Connection[Any], tokenizer: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('tokenizer', %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (tokenizer,),
    )


def create_vectors(conn: psycopg.Connection[Any], dimensions: int) -> None:
    """The unit vector table for ``dimensions`` (deleted with its unit by cascade)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS unit_vectors (unit_id bigint PRIMARY KEY REFERENCES "
        "units(id) ON DELETE CASCADE, kind text NOT NULL, source text NOT NULL, "
        f"embedding vector({int(dimensions)}) NOT NULL)"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS unit_vectors_kind_source ON unit_vectors (kind, source)"
    )


def has_hnsw(conn: psycopg.Connection[Any], schema: str) -> bool:
    return all(has_relation(conn, schema, name) for name in HNSW_INDEXES.values())


def create_hnsw(conn: psycopg.Connection[Any], m: int = 16, ef_construction: int = 64) -> None:
    """The approximate HNSW indexes over unit vectors (cosine), one per unit kind (partial
    indexes: a chunk search never walks past blocks, which outnumber chunks about 10 to 1),
    inside the caller's transaction.

    The build is much faster while the graph fits in ``maintenance_work_mem``
    (about 1.7 KB per 384-d vector), so it is raised for this transaction only.
    """
    conn.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
    conn.execute(f"DROP INDEX IF EXISTS {OLD_HNSW_INDEX}")
    for kind, name in HNSW_INDEXES.items():
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON unit_vectors USING hnsw "
            f"(embedding vector_cosine_ops) "
            f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) "
            f"WHERE kind = '{kind}'"
        )
