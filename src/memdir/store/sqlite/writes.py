"""Write-side SQL of the SQLite index: files, units, their vectors, terms and the change log.

Every function runs inside the caller's write transaction (``SqliteStore._write``).
A rewrite of a file keeps the rows of the units it still has (same kind, lines, text,
heading path and hash): their ids, vectors and terms stay, so re-indexing a daily note
after one appended line inserts a unit or two, not the whole note, and the engines'
copies change by as much.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memdir.store.contracts import (
    EmbedderIdentity,
    FileKey,
    FileStamp,
    FileTail,
    FileWrite,
    Unit,
    Vector,
)
from memdir.store.identity import check_index_identity
from memdir.store.sqlite.changelog import record_changes, reset_log
from memdir.store.sqlite.keywords.terms import Tokens, read_terms, write_terms
from memdir.store.sqlite.rows import read_meta
from memdir.store.sqlite.vectors.graph import drop_tags

UnitKey = tuple[str, int, int, str, str, str]


def _key(kind: str, start: int, end: int, text: str, heading: str, sha: str) -> UnitKey:
    return (kind, start, end, text, heading, sha)


def write_file(
    conn: sqlite3.Connection,
    item: FileWrite,
    identity: EmbedderIdentity | None,
    cache: bool,
    tokens: Tokens,
) -> int:
    """Upsert the file row and bring its units (vectors, terms) to ``item``; returns units
    written. ``identity`` is the index's embedder (None: keyword-only); with ``cache``,
    vectors are stored under their text's hash for any unit of that text to share."""
    stamp = item.stamp
    file_id = conn.execute(
        "INSERT INTO files (source, path, sha256, size, mtime, mtime_ns) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (source, path) DO UPDATE SET "
        "sha256 = excluded.sha256, size = excluded.size, mtime = excluded.mtime, "
        "mtime_ns = excluded.mtime_ns RETURNING id",
        (stamp.source, stamp.path, stamp.sha256, stamp.size, stamp.mtime, stamp.mtime_ns),
    ).fetchone()[0]
    rows = conn.execute(f"{_UNIT_ROWS} WHERE file_id = ? ORDER BY id", (file_id,)).fetchall()
    return _bring_units(conn, item, identity, cache, tokens, file_id, rows)


_UNIT_ROWS = (
    "SELECT id, kind, start_line, end_line, text, heading_path, sha256, vector_id FROM units"
)


def write_tail(
    conn: sqlite3.Connection,
    item: FileWrite,
    tail: FileTail,
    identity: EmbedderIdentity | None,
    cache: bool,
    tokens: Tokens,
) -> int | None:
    """``write_file`` of the end of a file (``FileTail``): only the rows of the chunks and
    blocks from the tail's lines on are read and brought to ``item.units``; None (nothing
    written) when the file is not indexed as ``tail.base_sha256``."""
    stamp = item.stamp
    row = conn.execute(
        "SELECT id, sha256 FROM files WHERE source = ? AND path = ?", (stamp.source, stamp.path)
    ).fetchone()
    if row is None or row[1] != tail.base_sha256:
        return None
    file_id = row[0]
    conn.execute(
        "UPDATE files SET sha256 = ?, size = ?, mtime = ?, mtime_ns = ? WHERE id = ?",
        (stamp.sha256, stamp.size, stamp.mtime, stamp.mtime_ns, file_id),
    )
    rows = conn.execute(
        f"{_UNIT_ROWS} WHERE file_id = ? AND ((kind = 'chunk' AND start_line >= ?) "
        "OR (kind = 'block' AND start_line >= ?)) ORDER BY id",
        (file_id, tail.chunks_from, tail.blocks_from),
    ).fetchall()
    return _bring_units(conn, item, identity, cache, tokens, file_id, rows)


def _bring_units(
    conn: sqlite3.Connection,
    item: FileWrite,
    identity: EmbedderIdentity | None,
    cache: bool,
    tokens: Tokens,
    file_id: int,
    rows: list[Any],
) -> int:
    """Bring the unit ``rows`` of a file to ``item.units``: rows of the same unit stay
    (their ids, vectors and terms), the others go, new units come."""
    stamp = item.stamp
    before = next(iter(read_terms(conn, [file_id])), None)
    old: dict[UnitKey, list[tuple[int, int | None]]] = {}
    for uid, *key, vector_id in rows:
        old.setdefault(_key(*key), []).append((uid, vector_id))
    for n, unit in enumerate(item.units):
        heading = "\n".join(unit.heading_path)
        vector = None if item.vectors is None or identity is None else item.vectors[n]
        kept = old.get(
            _key(unit.kind, unit.start_line, unit.end_line, unit.text, heading, unit.sha256)
        )
        if kept:
            uid, vector_id = kept.pop(0)
            if vector is not None and (vector_id is None or not (cache and unit.sha256)):
                _set_vector(conn, uid, vector_id, identity, unit, vector, cache)
            continue
        uid = conn.execute(
            "INSERT INTO units (file_id, source, path, kind, start_line, end_line, text, "
            "heading_path, sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (file_id, stamp.source, stamp.path, unit.kind, unit.start_line, unit.end_line,
             unit.text, heading, unit.sha256),
        ).fetchone()[0]  # fmt: skip
        if vector is not None:
            _set_vector(conn, uid, None, identity, unit, vector, cache)
    gone = [uid for left in old.values() for uid, _ in left]
    conn.executemany("DELETE FROM units WHERE id = ?", [(uid,) for uid in gone])
    write_terms(conn, tokens, file_id, before)
    if identity is not None and item.vectors is None and item.units:
        mark_incomplete(conn, stamp.source)
    record_changes(conn, [file_id])
    return len(item.units)


def _set_vector(
    conn: sqlite3.Connection,
    unit_id: int,
    old_vector: int | None,
    identity: EmbedderIdentity | None,
    unit: Unit,
    vector: Vector,
    cache: bool,
) -> None:
    """Store ``vector`` for a unit: under its text's hash (shared, the embedding cache)
    when ``cache`` and the unit has a hash, else as a row of its own."""
    assert identity is not None
    blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
    key = (identity.provider, identity.model, identity.dimensions)
    if cache and unit.sha256:
        conn.execute(
            "INSERT OR IGNORE INTO embeddings (provider, model, dimensions, text_sha256, vector) "
            "VALUES (?, ?, ?, ?, ?)",
            (*key, unit.sha256, blob),
        )
        (vector_id,) = conn.execute(
            "SELECT id FROM embeddings WHERE provider = ? AND model = ? AND text_sha256 = ?",
            (identity.provider, identity.model, unit.sha256),
        ).fetchone()
    else:
        (vector_id,) = conn.execute(
            "INSERT INTO embeddings (provider, model, dimensions, text_sha256, vector) "
            "VALUES (?, ?, ?, NULL, ?) RETURNING id",
            (*key, blob),
        ).fetchone()
    conn.execute("UPDATE units SET vector_id = ? WHERE id = ?", (vector_id, unit_id))
    if old_vector is not None and old_vector != vector_id:
        conn.execute("DELETE FROM embeddings WHERE id = ? AND text_sha256 IS NULL", (old_vector,))


def mark_incomplete(conn: sqlite3.Connection, source: str) -> None:
    """Note that some units of ``source`` have no vector (a keyword-only write)."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (f"vectors_incomplete:{source}",))


def delete_file(conn: sqlite3.Connection, key: FileKey) -> None:
    """Remove a file with its units (their terms and private vectors go along)."""
    row = conn.execute("SELECT id FROM files WHERE source = ? AND path = ?", key).fetchone()
    if row is not None:
        conn.execute("DELETE FROM units WHERE file_id = ?", (row[0],))
        conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
        record_changes(conn, [row[0]])


def move_file(conn: sqlite3.Connection, old: FileKey, new: FileStamp) -> bool:
    """Rename a file keeping its units and vectors; False when ``old`` is not indexed.

    Nothing is logged: the engines hold no paths, and a rename stays in its source.
    """
    row = conn.execute("SELECT id FROM files WHERE source = ? AND path = ?", old).fetchone()
    if row is None:
        return False
    delete_file(conn, new.key)
    conn.execute(
        "UPDATE files SET path = ?, sha256 = ?, size = ?, mtime = ?, mtime_ns = ? WHERE id = ?",
        (new.path, new.sha256, new.size, new.mtime, new.mtime_ns, row[0]),
    )
    conn.execute("UPDATE units SET path = ? WHERE file_id = ?", (new.path, row[0]))
    return True


def update_stamps(conn: sqlite3.Connection, stamps: Sequence[FileStamp]) -> None:
    conn.executemany(
        "UPDATE files SET size = ?, mtime = ?, mtime_ns = ? WHERE source = ? AND path = ?",
        [(s.size, s.mtime, s.mtime_ns, s.source, s.path) for s in stamps],
    )


def bind_identity(conn: sqlite3.Connection, identity: EmbedderIdentity, path: Path) -> None:
    """Record ``identity`` in a keyword-only index, or check it matches the recorded one;
    units written before any embedder are marked for the next sync to embed."""
    recorded = EmbedderIdentity.from_meta(read_meta(conn))
    if recorded is not None:
        check_index_identity(str(path), recorded, identity)
        return
    rows = [("identity_provider", identity.provider), ("identity_model", identity.model),
            ("identity_dimensions", str(identity.dimensions))]  # fmt: skip
    conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", rows)
    for (source,) in conn.execute("SELECT DISTINCT source FROM files").fetchall():
        mark_incomplete(conn, source)


def clear(conn: sqlite3.Connection, keep_cache: bool, tokenizer: str | None) -> None:
    """Empty the index (files, units, terms, identity, graph tags; the embedding cache
    unless ``keep_cache`` is false) and start a new change-log epoch."""
    for table in ("units", "file_terms", "files"):
        conn.execute(f"DELETE FROM {table}")
    if not keep_cache:
        conn.execute("DELETE FROM embeddings")
    conn.execute("DELETE FROM meta WHERE key LIKE 'identity_%' OR key LIKE 'vectors_incomplete:%'")
    if tokenizer is not None:
        set_tokenizer(conn, tokenizer)
    drop_tags(conn)
    reset_log(conn)


def set_tokenizer(conn: sqlite3.Connection, tokenizer: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', ?)", (tokenizer,))
    reset_log(conn)  # the engines tokenise queries as the index does: they reload
