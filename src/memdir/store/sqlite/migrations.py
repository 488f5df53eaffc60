"""Every schema change of the SQLite databases, as numbered migrations.

``MIGRATIONS`` (the index, ``index/memdir.db``) and ``FACT_MIGRATIONS`` (the facts,
``index/facts.db``) are ordered lists; a database records in ``migrations`` (or
``fact_migrations``) the names it has, always a prefix of its list, and one with a
name this memdir does not know is refused with an error that names the fix. A
migration never changes after it has shipped: a later change appends ``m00N_<what>``.

Most migrations run in one write transaction. One that must touch every file (giving
an old index its kept terms) is *resumable*: its ``setup`` runs (idempotently) in a
first transaction, then ``resume`` does a batch per transaction, so other writers get
their turn and a process killed midway carries on where it stopped at the next open;
only the batch that finds nothing left records the migration.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from memdir.errors import StoreError
from memdir.store.sqlite.changelog import create_log
from memdir.store.sqlite.keywords.terms import MISSING, TABLE, Tokens, backfill_terms
from memdir.store.sqlite.rows import tokenizer_of

log = logging.getLogger(__name__)

Step = Callable[[sqlite3.Connection], None]
TERMS_BATCH = 200  # files given their terms per transaction by m003


@dataclass(frozen=True)
class Migration:
    name: str
    setup: Step
    resume: Callable[[sqlite3.Connection], int] | None = None  # batch: work done, 0 when none


_M001 = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE files (id INTEGER PRIMARY KEY, source TEXT NOT NULL, path TEXT NOT NULL,
        sha256 TEXT NOT NULL, size INTEGER NOT NULL, mtime REAL NOT NULL,
        mtime_ns INTEGER NOT NULL, UNIQUE (source, path))""",
    """CREATE TABLE units (id INTEGER PRIMARY KEY AUTOINCREMENT,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        source TEXT NOT NULL, path TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('chunk', 'block')),
        start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, text TEXT NOT NULL,
        heading_path TEXT NOT NULL DEFAULT '', sha256 TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX units_file ON units (file_id)",
    "CREATE INDEX units_source_kind ON units (source, kind)",
    """CREATE TABLE unit_vectors (unit_id INTEGER PRIMARY KEY REFERENCES units(id)
        ON DELETE CASCADE, kind TEXT NOT NULL, source TEXT NOT NULL, embedding BLOB NOT NULL)""",
    """CREATE TABLE embedding_cache (provider TEXT NOT NULL, model TEXT NOT NULL,
        text_sha256 TEXT NOT NULL, dimensions INTEGER NOT NULL, vector BLOB NOT NULL,
        PRIMARY KEY (provider, model, text_sha256)) WITHOUT ROWID""",
]


def m001_initial(conn: sqlite3.Connection) -> None:
    """Files, units, a vector table, the embedding cache and the meta table."""
    for statement in _M001:
        conn.execute(statement)


def m002_reindex_units(conn: sqlite3.Connection) -> None:
    """Re-chunk every file at the next sync: unit texts lost memdir's markers and vectors
    their headings and list syntax (``memdir.index.chunking``). Clearing the stamps makes
    the sync read each file again; unchanged texts still come from the embedding cache."""
    conn.execute("UPDATE files SET sha256 = '', size = -1")


def m003_kept_terms(conn: sqlite3.Connection) -> None:
    """Every unit's terms, kept per file for the in-memory BM25 (``keywords/terms.py``);
    an index that predates them gains them file by file (``m003_resume``)."""
    conn.execute(TABLE)
    conn.execute("DELETE FROM meta WHERE key = 'terms_pending'")  # the flag of earlier versions


def m003_resume(conn: sqlite3.Connection) -> int:
    missing = int(conn.execute(f"SELECT count(*) FROM ({MISSING})").fetchone()[0])
    if missing:
        log.info("giving %d files their terms for keyword search (once)", missing)
    return backfill_terms(conn, Tokens(tokenizer_of(conn)), TERMS_BATCH)


def m004_change_log(conn: sqlite3.Connection) -> None:
    """One change log by file id (``changelog.py``) instead of one per engine; graphs
    tagged with positions of the old logs are rebuilt by the next sync."""
    for table in ("term_log", "vector_log"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(
        "DELETE FROM meta WHERE key IN ('term_epoch', 'vector_epoch') OR key LIKE 'vector_graph:%'"
    )
    create_log(conn)


_EMBEDDINGS = [
    """CREATE TABLE embeddings (id INTEGER PRIMARY KEY, provider TEXT NOT NULL,
        model TEXT NOT NULL, dimensions INTEGER NOT NULL, text_sha256 TEXT,
        vector BLOB NOT NULL)""",
    "CREATE UNIQUE INDEX embeddings_key ON embeddings (provider, model, text_sha256)",
    "ALTER TABLE units ADD COLUMN vector_id INTEGER",
    # a vector no other unit can share (its text has no hash) goes with its unit
    """CREATE TRIGGER units_private_vector AFTER DELETE ON units
        WHEN old.vector_id IS NOT NULL BEGIN
        DELETE FROM embeddings WHERE id = old.vector_id AND text_sha256 IS NULL; END""",
]


def m005_vectors_once(conn: sqlite3.Connection) -> None:
    """Each vector is stored once, in ``embeddings`` (the embedding cache), and a unit
    points at its row; the per-unit copy and the sqlite-vec table are gone.

    The cache was a WITHOUT ROWID table whose 1.5 KB rows spilled to overflow pages
    (4.5 KB a vector on disk), beside a second copy per unit. A unit keeps exactly the
    vector it had: the cached one when the bytes are equal, else a row of its own.
    Vectors of a sqlite-vec table cannot be read without the extension: those units get
    the cached vector of their text, and any left without one are marked for the next
    sync to embed.
    """
    for statement in _EMBEDDINGS:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO embeddings (provider, model, dimensions, text_sha256, vector) "
        "SELECT provider, model, dimensions, text_sha256, vector FROM embedding_cache"
    )
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if "identity_provider" in meta:
        key = (meta["identity_provider"], meta["identity_model"])
        if _has_table(conn, "unit_vec"):
            _link_cached(conn, key, equal_bytes=False)
            _forget_virtual_table(conn, "unit_vec")
        else:
            _link_cached(conn, key, equal_bytes=True)
            _copy_private(conn, key, int(meta["identity_dimensions"]))
        incomplete = conn.execute(
            "SELECT DISTINCT source FROM units WHERE vector_id IS NULL"
        ).fetchall()
        conn.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, '1')",
            [(f"vectors_incomplete:{source}",) for (source,) in incomplete],
        )
    conn.execute("DROP TABLE unit_vectors")
    conn.execute("DROP TABLE embedding_cache")
    conn.execute("DELETE FROM meta WHERE key = 'vector_backend'")


def _link_cached(conn: sqlite3.Connection, key: tuple[str, str], equal_bytes: bool) -> None:
    """Point each unit at the cached vector of its text (with ``equal_bytes``: only when
    it equals the unit's own stored vector)."""
    own = (
        "JOIN unit_vectors v ON v.unit_id = units.id AND v.embedding = e.vector "
        if equal_bytes
        else ""
    )
    conn.execute(
        f"UPDATE units SET vector_id = (SELECT e.id FROM embeddings e {own}"
        "WHERE e.provider = ? AND e.model = ? AND e.text_sha256 = units.sha256) "
        "WHERE sha256 != ''",
        key,
    )


def _copy_private(conn: sqlite3.Connection, key: tuple[str, str], dimensions: int) -> None:
    """Units whose stored vector the cache does not hold get a row of their own."""
    rows = conn.execute(
        "SELECT v.unit_id, v.embedding FROM unit_vectors v JOIN units u ON u.id = v.unit_id "
        "WHERE u.vector_id IS NULL"
    ).fetchall()
    for unit_id, blob in rows:
        (vector_id,) = conn.execute(
            "INSERT INTO embeddings (provider, model, dimensions, text_sha256, vector) "
            "VALUES (?, ?, ?, NULL, ?) RETURNING id",
            (*key, dimensions, blob),
        ).fetchone()
        conn.execute("UPDATE units SET vector_id = ? WHERE id = ?", (vector_id, unit_id))


def _forget_virtual_table(conn: sqlite3.Connection, name: str) -> None:
    """Remove a virtual table whose module is not loaded: its schema row (it has no
    pages of its own), then its shadow tables, which are plain tables."""
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute("DELETE FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        (version,) = conn.execute("PRAGMA schema_version").fetchone()
        conn.execute(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    for (table,) in tables:
        if str(table).startswith(f"{name}_"):
            conn.execute(f'DROP TABLE "{table}"')


def m006_terms_only(conn: sqlite3.Connection) -> None:
    """Keyword search ranks the kept terms alone: the FTS5 index over units and its
    triggers go (FTS5 still tokenises, through a temporary table; its ``bm25()`` is the
    oracle the tests hold the ranking to)."""
    for name in ("units_fts_insert", "units_fts_delete", "units_fts_update"):
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute("DROP TABLE IF EXISTS units_fts")


def m007_blocks_by_line(conn: sqlite3.Connection) -> None:
    """Search finds the blocks around a block by their lines in its file
    (``SqliteStore.blocks_around``): ids follow the order units were written in."""
    conn.execute("CREATE INDEX IF NOT EXISTS units_by_line ON units (file_id, kind, start_line)")


MIGRATIONS: list[Migration] = [
    Migration("m001_initial", m001_initial),
    Migration("m002_reindex_units", m002_reindex_units),
    Migration("m003_kept_terms", m003_kept_terms, m003_resume),
    Migration("m004_change_log", m004_change_log),
    Migration("m005_vectors_once", m005_vectors_once),
    Migration("m006_terms_only", m006_terms_only),
    Migration("m007_blocks_by_line", m007_blocks_by_line),
]


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return found is not None


def applied(conn: sqlite3.Connection, table: str = "migrations") -> list[str]:
    """The names recorded in ``table``, in the order they were applied."""
    if not _has_table(conn, table):
        return []
    return [row[0] for row in conn.execute(f"SELECT name FROM {table} ORDER BY id")]


def pending(
    conn: sqlite3.Connection, migrations: list[Migration], table: str, location: str
) -> list[Migration]:
    """The migrations not yet applied; refuses a database migrated by a newer memdir."""
    done = set(applied(conn, table))
    unknown = done - {m.name for m in migrations}
    if unknown:
        raise StoreError(
            f"the database {location!r} has migrations this memdir does not know "
            f"({sorted(unknown)}); upgrade memdir or run `memdir index rebuild`"
        )
    return [m for m in migrations if m.name not in done]


def advance(
    conn: sqlite3.Connection, migrations: list[Migration], table: str, location: str
) -> bool:
    """Run pending migrations in the caller's write transaction, up to the first batch of
    a resumable one; returns whether work is left for another transaction."""
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {table} "
        "(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)"
    )
    for migration in pending(conn, migrations, table, location):
        migration.setup(conn)
        if migration.resume is not None and migration.resume(conn) > 0:
            return True
        conn.execute(
            f"INSERT INTO {table} (name, applied_at) VALUES (?, ?)",
            (migration.name, datetime.now(UTC).isoformat(timespec="seconds")),
        )
    return False


# -- the facts database ---------------------------------------------------------------------

_FACTS_INDEX = "CREATE INDEX facts_scope_category ON facts (scope, category)"
_FACTS_TRIGGERS = [
    """CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
        INSERT INTO facts_fts (rowid, text) VALUES (new.num, new.text); END""",
    """CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
        INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.num, old.text); END""",
    """CREATE TRIGGER facts_fts_update AFTER UPDATE OF text ON facts BEGIN
        INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.num, old.text);
        INSERT INTO facts_fts (rowid, text) VALUES (new.num, new.text); END""",
]
_FACT_VECTORS = """CREATE TABLE fact_vectors (num INTEGER PRIMARY KEY REFERENCES facts(num)
    ON DELETE CASCADE, text_sha256 TEXT NOT NULL, embedding BLOB NOT NULL)"""

_F001 = [
    "CREATE TABLE fact_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE fact_files (scope TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
        size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, PRIMARY KEY (scope, path))
        WITHOUT ROWID""",
    """CREATE TABLE fact_events (scope TEXT NOT NULL, path TEXT NOT NULL, line INTEGER NOT NULL,
        kind TEXT NOT NULL, fact_id TEXT NOT NULL, at_us INTEGER NOT NULL, text TEXT NOT NULL,
        category TEXT NOT NULL, importance INTEGER NOT NULL, supersedes TEXT, reason TEXT,
        PRIMARY KEY (scope, path, line)) WITHOUT ROWID""",
    """CREATE TABLE facts (num INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL, text TEXT NOT NULL, category TEXT NOT NULL,
        importance INTEGER NOT NULL, recorded_us INTEGER NOT NULL,
        valid_from_us INTEGER NOT NULL, valid_to_us INTEGER, supersedes TEXT,
        source_path TEXT NOT NULL, source_line INTEGER NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0, last_access_us INTEGER,
        forgotten_us INTEGER, forgotten_reason TEXT)""",
    _FACTS_INDEX,
    """CREATE VIRTUAL TABLE facts_fts USING fts5(text, content='facts', content_rowid='num',
        tokenize='porter unicode61 remove_diacritics 2')""",
    *_FACTS_TRIGGERS,
    _FACT_VECTORS,
]


def f001_facts(conn: sqlite3.Connection) -> None:
    """Meta, file stamps, events, facts with FTS5, and fact vectors."""
    for statement in _F001:
        conn.execute(statement)


_FACTS_BY_SCOPE = """CREATE TABLE facts (num INTEGER PRIMARY KEY, id TEXT NOT NULL,
    scope TEXT NOT NULL, text TEXT NOT NULL, category TEXT NOT NULL,
    importance INTEGER NOT NULL, recorded_us INTEGER NOT NULL,
    valid_from_us INTEGER NOT NULL, valid_to_us INTEGER, supersedes TEXT,
    source_path TEXT NOT NULL, source_line INTEGER NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0, last_access_us INTEGER,
    forgotten_us INTEGER, forgotten_reason TEXT, UNIQUE (scope, id))"""


def f002_facts_by_scope(conn: sqlite3.Connection) -> None:
    """A fact id is unique within its scope only (it was unique across scopes).

    Two workspaces may hold lines with the same fact id (a copied note, or an
    agent writing another workspace's id on purpose); each scope keeps its own
    fact. SQLite cannot change a constraint in place, so the table is copied
    with its row numbers (which the FTS5 rows and the vectors point to). The
    vectors move aside first: with foreign keys on, dropping ``facts`` would
    delete them by cascade.
    """
    conn.execute("CREATE TEMP TABLE f002_vectors AS SELECT * FROM fact_vectors")
    conn.execute("DROP TABLE fact_vectors")
    conn.execute(_FACTS_BY_SCOPE.replace("CREATE TABLE facts", "CREATE TABLE f002_facts", 1))
    conn.execute("INSERT INTO f002_facts SELECT * FROM facts")
    conn.execute("DROP TABLE facts")  # its index and triggers go with it
    conn.execute("ALTER TABLE f002_facts RENAME TO facts")
    for statement in (_FACTS_INDEX, *_FACTS_TRIGGERS, _FACT_VECTORS):
        conn.execute(statement)
    conn.execute("INSERT INTO fact_vectors SELECT * FROM temp.f002_vectors")
    conn.execute("DROP TABLE temp.f002_vectors")


_VECTOR_LOG = [
    """CREATE TABLE fact_vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT,
        num INTEGER NOT NULL)""",
    """CREATE TRIGGER fact_vectors_log_insert AFTER INSERT ON fact_vectors BEGIN
        INSERT INTO fact_vector_log (num) VALUES (new.num); END""",
    """CREATE TRIGGER fact_vectors_log_update AFTER UPDATE ON fact_vectors BEGIN
        INSERT INTO fact_vector_log (num) VALUES (new.num); END""",
    """CREATE TRIGGER fact_vectors_log_delete AFTER DELETE ON fact_vectors BEGIN
        INSERT INTO fact_vector_log (num) VALUES (old.num); END""",
]


def f003_vector_log(conn: sqlite3.Connection) -> None:
    """Every change of a fact vector logs its fact number (triggers), so a process holding
    the vectors in memory re-reads only what changed since, whoever wrote it."""
    for statement in _VECTOR_LOG:
        conn.execute(statement)


def f004_event_until(conn: sqlite3.Connection) -> None:
    """A saved fact's end of validity (``valid_until``), when it has one."""
    conn.execute("ALTER TABLE fact_events ADD COLUMN until_us INTEGER")


FACT_MIGRATIONS: list[Migration] = [
    Migration("f001_facts", f001_facts),
    Migration("f002_facts_by_scope", f002_facts_by_scope),
    Migration("f003_vector_log", f003_vector_log),
    Migration("f004_event_until", f004_event_until),
]
