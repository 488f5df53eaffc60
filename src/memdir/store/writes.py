"""Write-side SQL of the index store: files, units, their vectors and the embedding cache.

Every function runs inside the caller's write transaction (``SqliteStore._write``).
``resolve`` returns the vector index of the database, or None when the index
has no embedder identity yet (keyword-only).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from memdir.store.base import EmbedderIdentity
from memdir.store.records import FileKey, FileStamp, FileWrite
from memdir.store.terms import Tokens, delete_terms, write_terms
from memdir.store.vectors import VectorIndex

Resolve = Callable[[sqlite3.Connection], VectorIndex | None]


def write_file(
    conn: sqlite3.Connection,
    item: FileWrite,
    resolve: Resolve,
    identity: EmbedderIdentity | None,
    tokens: Tokens | None = None,
) -> int:
    """Upsert the file row and replace its units (and vectors, and terms when ``tokens``
    is given); returns units written."""
    stamp = item.stamp
    file_id = conn.execute(
        "INSERT INTO files (source, path, sha256, size, mtime, mtime_ns) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (source, path) DO UPDATE SET "
        "sha256 = excluded.sha256, size = excluded.size, mtime = excluded.mtime, "
        "mtime_ns = excluded.mtime_ns RETURNING id",
        (stamp.source, stamp.path, stamp.sha256, stamp.size, stamp.mtime, stamp.mtime_ns),
    ).fetchone()[0]
    delete_units(conn, resolve, file_id)
    rows: list[tuple[int, str, str]] = []
    for unit in item.units:
        uid = conn.execute(
            "INSERT INTO units (file_id, source, path, kind, start_line, end_line, text, "
            "heading_path, sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                file_id,
                stamp.source,
                stamp.path,
                unit.kind,
                unit.start_line,
                unit.end_line,
                unit.text,
                "\n".join(unit.heading_path),
                unit.sha256,
            ),
        ).fetchone()[0]
        rows.append((uid, unit.kind, stamp.source))
    if tokens is not None:
        write_terms(conn, tokens, file_id)
    index = resolve(conn)
    if item.vectors is not None and index is not None and rows:
        index.put(conn, rows, item.vectors)
        if identity is not None:
            cache_put(conn, identity, [u.sha256 for u in item.units], item.vectors)
    elif index is not None and rows:
        mark_incomplete(conn, stamp.source)
    return len(rows)


def mark_incomplete(conn: sqlite3.Connection, source: str) -> None:
    """Note that some units of ``source`` have no vector (a keyword-only write)."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (f"vectors_incomplete:{source}",))


def delete_units(conn: sqlite3.Connection, resolve: Resolve, file_id: int) -> None:
    """Delete a file's units, their FTS rows (by trigger) and their vectors."""
    ids = [r[0] for r in conn.execute("SELECT id FROM units WHERE file_id = ?", (file_id,))]
    if not ids:
        return
    index = resolve(conn)
    if index is not None:
        index.delete(conn, ids)
    conn.execute("DELETE FROM units WHERE file_id = ?", (file_id,))


def delete_file(conn: sqlite3.Connection, resolve: Resolve, key: FileKey) -> None:
    row = conn.execute("SELECT id FROM files WHERE source = ? AND path = ?", key).fetchone()
    if row is not None:
        delete_units(conn, resolve, row[0])
        delete_terms(conn, row[0])
        conn.execute("DELETE FROM files WHERE id = ?", (row[0],))


def move_file(conn: sqlite3.Connection, resolve: Resolve, old: FileKey, new: FileStamp) -> bool:
    """Rename a file keeping its units and vectors; False when ``old`` is not indexed."""
    row = conn.execute("SELECT id FROM files WHERE source = ? AND path = ?", old).fetchone()
    if row is None:
        return False
    delete_file(conn, resolve, new.key)
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


def cache_put(
    conn: sqlite3.Connection,
    identity: EmbedderIdentity,
    hashes: Sequence[str],
    vectors: npt.NDArray[np.float32],
) -> None:
    data = np.ascontiguousarray(vectors, dtype=np.float32)
    conn.executemany(
        "INSERT OR IGNORE INTO embedding_cache (provider, model, text_sha256, dimensions, vector) "
        "VALUES (?, ?, ?, ?, ?)",
        [
            (identity.provider, identity.model, h, identity.dimensions, data[i].tobytes())
            for i, h in enumerate(hashes)
            if h
        ],
    )
