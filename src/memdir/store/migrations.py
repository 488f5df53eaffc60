"""Numbered schema migrations of the index database.

``MIGRATIONS`` is an ordered list of ``(name, function)``; each function gets a
connection inside the write transaction that records it in the ``migrations``
table. A later feature adds its tables by appending ``m00N_<what>`` here; a
migration never changes after it has shipped.

The FTS table is not a migration: its tokenizer is chosen when the index is
created (and again by ``memdir index rebuild``), so :func:`create_fts` and
:func:`drop_fts` are called by the store with the requested tokenizer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from memdir.errors import StoreError

Migration = tuple[str, Callable[[sqlite3.Connection], None]]

TOKENIZERS = {
    "porter": "porter unicode61 remove_diacritics 2",
    "trigram": "trigram",
}


_M001 = [
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID
    """,
    """
    CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        path TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        mtime_ns INTEGER NOT NULL,
        UNIQUE (source, path)
    )
    """,
    """
    CREATE TABLE units (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        source TEXT NOT NULL,
        path TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('chunk', 'block')),
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        text TEXT NOT NULL,
        heading_path TEXT NOT NULL DEFAULT '',
        sha256 TEXT NOT NULL DEFAULT ''
    )
    """,
    """
    CREATE INDEX units_file ON units (file_id)
    """,
    """
    CREATE INDEX units_source_kind ON units (source, kind)
    """,
    """
    CREATE TABLE unit_vectors (
        unit_id INTEGER PRIMARY KEY REFERENCES units(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        source TEXT NOT NULL,
        embedding BLOB NOT NULL
    )
    """,
    """
    CREATE TABLE embedding_cache (
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        text_sha256 TEXT NOT NULL,
        dimensions INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (provider, model, text_sha256)
    ) WITHOUT ROWID
    """,
]


def m001_initial(conn: sqlite3.Connection) -> None:
    """Files, units, the numpy vector table, the embedding cache and the meta table."""
    for statement in _M001:
        conn.execute(statement)


def m002_reindex_units(conn: sqlite3.Connection) -> None:
    """Re-chunk every file at the next sync: unit texts lost memdir's markers and vectors
    their headings and list syntax (``memdir.index.chunking``). Clearing the stamps makes
    the sync read each file again; unchanged texts still come from the embedding cache."""
    conn.execute("UPDATE files SET sha256 = '', size = -1")


MIGRATIONS: list[Migration] = [
    ("m001_initial", m001_initial),
    ("m002_reindex_units", m002_reindex_units),
]


def pending_migrations(conn: sqlite3.Connection) -> list[Migration]:
    """Migrations not yet applied (all of them for a new database)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'"
    ).fetchone()
    done: set[str] = set()
    if exists:
        done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    known = {name for name, _ in MIGRATIONS}
    unknown = done - known
    if unknown:
        raise StoreError(
            f"the index database has migrations this memdir does not know ({sorted(unknown)}); "
            "upgrade memdir or run `memdir index rebuild`"
        )
    return [(name, fn) for name, fn in MIGRATIONS if name not in done]


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations; the caller holds a write transaction. Returns their names."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations "
        "(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)"
    )
    applied = []
    for name, migrate in pending_migrations(conn):
        migrate(conn)
        conn.execute(
            "INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
            (name, datetime.now(UTC).isoformat(timespec="seconds")),
        )
        applied.append(name)
    return applied


def create_fts(conn: sqlite3.Connection, tokenizer: str) -> None:
    """Create the FTS5 index over units (external content) and the triggers that feed it."""
    spec = TOKENIZERS[tokenizer]
    statements = [
        f"""
        CREATE VIRTUAL TABLE units_fts USING fts5(
            text, heading_path, content='units', content_rowid='id', tokenize='{spec}'
        )
        """,
        """
        CREATE TRIGGER units_fts_insert AFTER INSERT ON units BEGIN
            INSERT INTO units_fts (rowid, text, heading_path)
            VALUES (new.id, new.text, new.heading_path);
        END
        """,
        """
        CREATE TRIGGER units_fts_delete AFTER DELETE ON units BEGIN
            INSERT INTO units_fts (units_fts, rowid, text, heading_path)
            VALUES ('delete', old.id, old.text, old.heading_path);
        END
        """,
        """
        CREATE TRIGGER units_fts_update AFTER UPDATE OF text, heading_path ON units BEGIN
            INSERT INTO units_fts (units_fts, rowid, text, heading_path)
            VALUES ('delete', old.id, old.text, old.heading_path);
            INSERT INTO units_fts (rowid, text, heading_path)
            VALUES (new.id, new.text, new.heading_path);
        END
        """,
        "INSERT INTO units_fts (units_fts) VALUES ('rebuild')",
    ]
    for statement in statements:
        conn.execute(statement)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', ?)", (tokenizer,))


def drop_fts(conn: sqlite3.Connection) -> None:
    """Drop the FTS table and its triggers (before recreating it with another tokenizer)."""
    for name in ("units_fts_insert", "units_fts_delete", "units_fts_update"):
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute("DROP TABLE IF EXISTS units_fts")
