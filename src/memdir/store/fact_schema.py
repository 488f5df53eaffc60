"""The SQLite facts tables: their DDL, their numbered migrations and the longer statements.

Owns the schema of ``fact_meta``, ``fact_files``, ``fact_events``, ``facts``
(with its FTS5 table and triggers) and ``fact_vectors``, and the
``fact_migrations`` table that records which of ``FACT_MIGRATIONS`` an index
has. Those migrations are apart from the index's own list, so the index never
sees them; an index with a migration this memdir does not know is refused
with an error that names the fix. ``SqliteFactStore`` runs these on its
connection; the PostgreSQL facts schema lives in ``postgres/facts_sql.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from memdir.errors import StoreError

FactMigration = tuple[str, Callable[[sqlite3.Connection], None]]

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


FACT_MIGRATIONS: list[FactMigration] = [
    ("f001_facts", f001_facts),
    ("f002_facts_by_scope", f002_facts_by_scope),
]

FACT_COLUMNS = (
    "id, text, category, importance, recorded_us, valid_from_us, valid_to_us, supersedes, "
    "source_path, source_line, access_count, last_access_us, forgotten_us, forgotten_reason"
)
"""The ``facts`` columns a ``Fact`` is read from, in ``fact_from_row`` order."""

UPSERT_FACT = (
    f"INSERT INTO facts ({FACT_COLUMNS.replace('id,', 'id, scope,', 1)}) "
    f"VALUES ({', '.join('?' * 15)}) ON CONFLICT (scope, id) DO UPDATE SET text = excluded.text, "
    "category = excluded.category, importance = excluded.importance, "
    "recorded_us = excluded.recorded_us, valid_from_us = excluded.valid_from_us, "
    "valid_to_us = excluded.valid_to_us, supersedes = excluded.supersedes, "
    "source_path = excluded.source_path, source_line = excluded.source_line, "
    "forgotten_us = excluded.forgotten_us, "
    "forgotten_reason = excluded.forgotten_reason"
)
"""Insert a fact row (``fact_row`` order) or update it, keeping its access statistics."""


def apply_fact_migrations(conn: sqlite3.Connection, location: str) -> None:
    """Create ``fact_migrations`` and run the pending ``FACT_MIGRATIONS`` (in the caller's
    transaction); refuse tables migrated by a newer memdir."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS fact_migrations "
        "(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM fact_migrations")}
    unknown = done - {name for name, _ in FACT_MIGRATIONS}
    if unknown:
        raise StoreError(
            f"the facts tables in {location!r} have migrations this memdir does not "
            f"know ({sorted(unknown)}); upgrade memdir or run `memdir index rebuild`"
        )
    for name, migrate in FACT_MIGRATIONS:
        if name not in done:
            migrate(conn)
            conn.execute(
                "INSERT INTO fact_migrations (name, applied_at) VALUES (?, ?)",
                (name, datetime.now(UTC).isoformat(timespec="seconds")),
            )
