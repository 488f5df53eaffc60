"""Write-side SQL of the PostgreSQL index: files, units, vectors and the embedding cache.

Every function runs inside the caller's transaction, after it took the advisory
locks of the sources it touches (``PostgresStore._write``). Units are loaded with
``COPY`` under ids drawn from their sequence first, so their vectors follow in a
second ``COPY`` without a round trip per unit. Unit vectors go when their unit
goes (``ON DELETE CASCADE``), and units when their file goes.

PostgreSQL text cannot hold NUL characters; a NUL in a unit's text is stored as
U+FFFD (sync already refuses files with NULs in their first 8 KiB).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from memdir.store.contracts import EmbedderIdentity, FileKey, FileStamp, FileWrite
from memdir.store.postgres.terms import Fts5Terms, tsvector_text

if TYPE_CHECKING:
    import psycopg

_UNIT_COPY = (
    "COPY units (id, file_id, source, path, kind, start_line, end_line, text, heading_path, "
    "sha256, terms, length) FROM STDIN"
)


def _clean(text: str) -> str:
    return text.replace("\x00", "\ufffd")


def write_files(
    conn: psycopg.Connection[Any],
    writes: Sequence[FileWrite],
    has_index: bool,
    identity: EmbedderIdentity | None,
    terms: Fts5Terms,
) -> int:
    """Upsert the files, replace their units (with their ``terms``, and vectors); returns
    the units written."""
    latest = {w.stamp.key: w for w in writes}  # one row per file, the last write wins
    items = list(latest.values())
    file_ids = _upsert_files(conn, [w.stamp for w in items])
    conn.execute("DELETE FROM units WHERE file_id = ANY(%s)", (list(file_ids.values()),))
    total = sum(len(w.units) for w in items)
    if total == 0:
        return 0
    unit_ids = [
        int(r[0])
        for r in conn.execute(
            "SELECT nextval(pg_get_serial_sequence('units', 'id')) FROM generate_series(1, %s)",
            (total,),
        ).fetchall()
    ]
    _copy_units(conn, items, file_ids, unit_ids, terms)
    if not has_index:  # keyword-only index: vectors have nowhere to go
        return total
    _copy_vectors(conn, items, unit_ids)
    for w in items:
        if w.vectors is not None and identity is not None:
            cache_put(conn, identity, [u.sha256 for u in w.units], w.vectors)
    for source in sorted({w.stamp.source for w in items if w.units and w.vectors is None}):
        mark_incomplete(conn, source)
    return total


def _upsert_files(conn: psycopg.Connection[Any], stamps: Sequence[FileStamp]) -> dict[FileKey, int]:
    ordered = sorted(stamps, key=lambda s: s.key)
    rows = conn.execute(
        "INSERT INTO files (source, path, sha256, size, mtime, mtime_ns) "
        "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[], "
        "%s::float8[], %s::bigint[]) "
        "ON CONFLICT (source, path) DO UPDATE SET sha256 = excluded.sha256, "
        "size = excluded.size, mtime = excluded.mtime, mtime_ns = excluded.mtime_ns "
        "RETURNING id, source, path",
        (
            [s.source for s in ordered],
            [s.path for s in ordered],
            [s.sha256 for s in ordered],
            [s.size for s in ordered],
            [s.mtime for s in ordered],
            [s.mtime_ns for s in ordered],
        ),
    ).fetchall()
    return {(str(r[1]), str(r[2])): int(r[0]) for r in rows}


def _copy_units(
    conn: psycopg.Connection[Any],
    items: Sequence[FileWrite],
    file_ids: dict[FileKey, int],
    unit_ids: Sequence[int],
    terms: Fts5Terms,
) -> None:
    counts = terms.of_units([unit for w in items for unit in w.units])
    position = 0
    with conn.cursor().copy(_UNIT_COPY) as copy:
        for w in items:
            file_id = file_ids[w.stamp.key]
            for unit in w.units:
                held = counts[position]
                copy.write_row(
                    (
                        unit_ids[position],
                        file_id,
                        w.stamp.source,
                        w.stamp.path,
                        unit.kind,
                        unit.start_line,
                        unit.end_line,
                        _clean(unit.text),
                        _clean("\n".join(unit.heading_path)),
                        unit.sha256,
                        tsvector_text(held),
                        sum(held.values()),
                    )
                )
                position += 1


def _copy_vectors(
    conn: psycopg.Connection[Any], items: Sequence[FileWrite], unit_ids: Sequence[int]
) -> None:
    position = 0
    sql = "COPY unit_vectors (unit_id, kind, source, embedding) FROM STDIN WITH (FORMAT BINARY)"
    with conn.cursor().copy(sql) as copy:
        copy.set_types(["int8", "text", "text", "vector"])
        for w in items:
            data = None if w.vectors is None else np.asarray(w.vectors, dtype=np.float32)
            for row, unit in enumerate(w.units):
                if data is not None:
                    copy.write_row((unit_ids[position], unit.kind, w.stamp.source, data[row]))
                position += 1


def mark_incomplete(conn: psycopg.Connection[Any], source: str) -> None:
    """Note that some units of ``source`` have no vector (a keyword-only write)."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, '1') ON CONFLICT (key) DO NOTHING",
        (f"vectors_incomplete:{source}",),
    )


def delete_files(conn: psycopg.Connection[Any], keys: Sequence[FileKey]) -> None:
    """Delete files; their units and vectors go by cascade."""
    ordered = sorted(set(keys))
    conn.execute(
        "DELETE FROM files f USING unnest(%s::text[], %s::text[]) AS k(source, path) "
        "WHERE f.source = k.source AND f.path = k.path",
        ([k[0] for k in ordered], [k[1] for k in ordered]),
    )


def move_file(conn: psycopg.Connection[Any], old: FileKey, new: FileStamp) -> bool:
    """Rename a file keeping its units and vectors; False when ``old`` is not indexed."""
    row = conn.execute(
        "SELECT id FROM files WHERE source = %s AND path = %s FOR UPDATE", old
    ).fetchone()
    if row is None:
        return False
    if new.key != old:
        delete_files(conn, [new.key])
    conn.execute(
        "UPDATE files SET path = %s, sha256 = %s, size = %s, mtime = %s, mtime_ns = %s "
        "WHERE id = %s",
        (new.path, new.sha256, new.size, new.mtime, new.mtime_ns, row[0]),
    )
    conn.execute("UPDATE units SET path = %s WHERE file_id = %s", (new.path, row[0]))
    return True


def update_stamps(conn: psycopg.Connection[Any], stamps: Sequence[FileStamp]) -> None:
    ordered = sorted(stamps, key=lambda s: s.key)
    conn.execute(
        "UPDATE files f SET size = s.size, mtime = s.mtime, mtime_ns = s.mtime_ns "
        "FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::float8[], %s::bigint[]) "
        "AS s(source, path, size, mtime, mtime_ns) "
        "WHERE f.source = s.source AND f.path = s.path",
        (
            [s.source for s in ordered],
            [s.path for s in ordered],
            [s.size for s in ordered],
            [s.mtime for s in ordered],
            [s.mtime_ns for s in ordered],
        ),
    )


def cache_put(
    conn: psycopg.Connection[Any],
    identity: EmbedderIdentity,
    hashes: Sequence[str],
    vectors: npt.NDArray[np.float32],
) -> None:
    """Add vectors to the embedding cache; existing entries stay (sorted: no deadlocks)."""
    data = np.asarray(vectors, dtype=np.float32)
    rows = {h: data[i] for i, h in enumerate(hashes) if h}
    if not rows:
        return
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO embedding_cache (provider, model, text_sha256, dimensions, vector) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            [
                (identity.provider, identity.model, h, identity.dimensions, rows[h])
                for h in sorted(rows)
            ],
        )
