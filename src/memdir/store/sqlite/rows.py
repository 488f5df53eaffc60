"""Read-side SQL of the SQLite index: ``meta`` (tokenizer, embedder identity), files, units,
cached vectors and counts. Every function runs on the caller's connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from memdir.store.contracts import EmbedderIdentity, FileKey, FileStamp, Unit, Vector
from memdir.store.identity import check_index_identity, check_query_dimensions

BATCH = 500  # ids per `IN (...)` query


def marks(count: int) -> str:
    return ", ".join("?" * count)


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The ``meta`` table as a dict, read on ``conn`` (inside its current transaction)."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def tokenizer_of(conn: sqlite3.Connection) -> str:
    """The index's tokenizer (an entry of ``keywords.terms.TOKENIZERS``)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
    return str(row[0]) if row else "porter"


def units_sql(count: int) -> str:
    """Units by id (``count`` of them) with their file's mtime, in :func:`unit_of` order."""
    return (
        "SELECT u.id, u.source, u.path, u.kind, u.start_line, u.end_line, u.text, "
        "u.heading_path, u.sha256, f.mtime FROM units u JOIN files f ON f.id = u.file_id "
        f"WHERE u.id IN ({', '.join('?' * count)})"
    )


def unit_of(row: Sequence[object]) -> Unit:
    uid, source, path, kind, start, end, text, heading, sha, mtime = row
    return Unit(
        id=int(uid),  # type: ignore[call-overload]
        source=str(source),
        path=str(path),
        kind="block" if kind == "block" else "chunk",
        start_line=int(start),  # type: ignore[call-overload]
        end_line=int(end),  # type: ignore[call-overload]
        text=str(text),
        heading_path=tuple(str(heading).split("\n")) if heading else (),
        sha256=str(sha),
        file_mtime=float(mtime),  # type: ignore[arg-type]
    )


def searchable(
    conn: sqlite3.Connection, expected: EmbedderIdentity | None, dimensions: int | None, path: Path
) -> bool:
    """Whether the index has vectors to search (checking ``expected`` and the query's
    dimensions against the recorded embedder)."""
    recorded = EmbedderIdentity.from_meta(read_meta(conn))
    if recorded is None:
        return False
    if expected is not None:
        check_index_identity(str(path), recorded, expected)
    if dimensions is not None:
        check_query_dimensions(str(path), recorded, dimensions)
    return True


def fetch_units(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Unit]:
    out: dict[int, Unit] = {}
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        out.update((row[0], unit_of(row)) for row in conn.execute(units_sql(len(batch)), batch))
    return out


def count_files(conn: sqlite3.Connection, sources: Sequence[str]) -> int:
    """Files of ``sources`` that hold at least one unit (a file of seeded template lines
    only, or of blank lines, holds nothing to search)."""
    sql = (
        f"SELECT count(*) FROM files f WHERE f.source IN ({marks(len(sources))}) "
        "AND EXISTS (SELECT 1 FROM units u WHERE u.file_id = f.id)"
    )
    return int(conn.execute(sql, list(sources)).fetchone()[0])


def file_stamps(conn: sqlite3.Connection, sources: Sequence[str]) -> dict[FileKey, FileStamp]:
    sql = "SELECT source, path, sha256, size, mtime_ns FROM files WHERE source IN "
    rows = conn.execute(f"{sql}({marks(len(sources))})", list(sources)).fetchall()
    return {(r[0], r[1]): FileStamp(*r) for r in rows}


def files_missing_vectors(conn: sqlite3.Connection, sources: Sequence[str]) -> set[FileKey]:
    sql = "SELECT DISTINCT source, path FROM units WHERE vector_id IS NULL AND source IN "
    rows = conn.execute(f"{sql}({marks(len(sources))})", list(sources)).fetchall()
    return {(r[0], r[1]) for r in rows}


def cached_vectors(
    conn: sqlite3.Connection, identity: EmbedderIdentity, hashes: Iterable[str]
) -> dict[str, Vector]:
    """Vectors from the embedding cache for these text hashes (misses are absent)."""
    wanted = list(dict.fromkeys(hashes))
    out: dict[str, Vector] = {}
    sql = ("SELECT text_sha256, vector FROM embeddings WHERE provider = ? AND model = ? "
           "AND dimensions = ? AND text_sha256 IN ({})")  # fmt: skip
    for start in range(0, len(wanted), BATCH):
        batch = wanted[start : start + BATCH]
        args = (identity.provider, identity.model, identity.dimensions, *batch)
        rows = conn.execute(sql.format(marks(len(batch))), args)
        out.update((h, np.frombuffer(blob, dtype=np.float32).copy()) for h, blob in rows)
    return out


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows of the index by what they are (``IndexStats``)."""
    sql = {
        "files": "SELECT count(*) FROM files",
        "chunks": "SELECT count(*) FROM units WHERE kind = 'chunk'",
        "blocks": "SELECT count(*) FROM units WHERE kind = 'block'",
        "cache": "SELECT count(*) FROM embeddings WHERE text_sha256 IS NOT NULL",
        "vectors": "SELECT count(*) FROM units WHERE vector_id IS NOT NULL",
    }
    return {k: int(conn.execute(q).fetchone()[0]) for k, q in sql.items()}


_AROUND = (
    "SELECT s.id, n.id, n.start_line FROM units s JOIN units n ON n.id IN ("
    "SELECT m.id FROM units m WHERE m.file_id = s.file_id AND m.kind = 'block' "
    "AND m.start_line {op} s.start_line ORDER BY m.start_line {order} LIMIT ?) "
    "WHERE s.kind = 'block' AND s.id IN ({marks})"
)


def blocks_around(
    conn: sqlite3.Connection, ids: Sequence[int], reach: int
) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """``IndexReader.blocks_around``: two lookups of the ``units_by_line`` index a block."""
    out: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for start in range(0, len(ids), BATCH):
        batch = list(ids[start : start + BATCH])
        sides = []
        for op, order in (("<", "DESC"), (">", "ASC")):
            sql = _AROUND.format(op=op, order=order, marks=marks(len(batch)))
            found: dict[int, list[tuple[int, int]]] = {i: [] for i in batch}
            for seed, other, line in conn.execute(sql, [reach, *batch]):
                found[seed].append((line, other))
            sides.append(found)
        before, after = sides
        for seed in batch:
            out[seed] = (
                tuple(i for _, i in sorted(before[seed], reverse=True)),
                tuple(i for _, i in sorted(after[seed])),
            )
    return out
