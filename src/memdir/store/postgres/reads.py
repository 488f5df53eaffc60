"""Read-side SQL of the PostgreSQL index: vector search, units and vectors.

Every function takes an open connection whose ``search_path`` starts with the
store's schema. Vector scores are cosine similarities ``1 - (embedding <=> query)``
in [-1, 1]; keyword ranking is ``bm25.py``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from memdir.store.contracts import EmbedderIdentity, IndexStats, ScoredId, Unit, UnitKind
from memdir.store.postgres import schema as ddl

if TYPE_CHECKING:
    import psycopg

Vector = npt.NDArray[np.float32]

# The kind is written into the statement so the planner can use its partial HNSW index.
_NEAREST = (
    "SELECT unit_id, 1 - (embedding <=> %s) AS score FROM unit_vectors "
    "WHERE kind = '{kind}' AND source = ANY(%s) ORDER BY embedding <=> %s LIMIT %s"
)
_UNITS = (
    "SELECT u.id, u.source, u.path, u.kind, u.start_line, u.end_line, u.text, u.heading_path, "
    "u.sha256, f.mtime FROM units u JOIN files f ON f.id = u.file_id WHERE u.id = ANY(%s)"
)


def read_meta(conn: psycopg.Connection[Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta").fetchall()}


def vector_search(
    conn: psycopg.Connection[Any],
    query: Vector,
    sources: Sequence[str],
    kind: UnitKind,
    limit: int,
    hnsw: bool,
) -> list[ScoredId]:
    """Nearest units by cosine: an exact scan, or the HNSW index with iterative scans."""
    vector = np.asarray(query, dtype=np.float32).reshape(-1)
    with conn.transaction():
        if hnsw:
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(2 * limit, 1000))}")
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        else:
            conn.execute("SET LOCAL enable_indexscan = off")  # never the approximate index
        sql = _NEAREST.format(kind="block" if kind == "block" else "chunk")
        # Never a prepared statement: its cached plan would ignore the settings above.
        rows = conn.execute(sql, (vector, list(sources), vector, limit), prepare=False).fetchall()
    hits = [ScoredId(unit_id=int(uid), score=_finite(score)) for uid, score in rows]
    return sorted(hits, key=lambda h: -h.score) if hnsw else hits


def scope_units(conn: psycopg.Connection[Any], sources: Sequence[str], kind: UnitKind) -> int:
    """Units of ``kind`` in ``sources`` (kept by the triggers of ``schema.py``)."""
    row = conn.execute(
        "SELECT coalesce(sum(units), 0) FROM source_counts WHERE source = ANY(%s) AND kind = %s",
        (list(sources), kind),
    ).fetchone()
    return int(row[0]) if row else 0


def _array(value: Any) -> Vector:
    """A fetched ``vector`` as float32 (pgvector yields ndarrays or ``Vector`` objects)."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def _finite(score: object) -> float:
    value = float(score)  # type: ignore[arg-type]
    return 0.0 if math.isnan(value) else value  # a zero vector has no direction


def get_units(conn: psycopg.Connection[Any], ids: Sequence[int]) -> dict[int, Unit]:
    rows = conn.execute(_UNITS, (list(ids),)).fetchall()
    return {int(row[0]): _unit(row) for row in rows}


def get_vectors(conn: psycopg.Connection[Any], ids: Sequence[int]) -> dict[int, Vector]:
    rows = conn.execute(
        "SELECT unit_id, embedding FROM unit_vectors WHERE unit_id = ANY(%s)", (list(ids),)
    ).fetchall()
    return {int(uid): _array(vec) for uid, vec in rows}


def cached_vectors(
    conn: psycopg.Connection[Any],
    provider: str,
    model: str,
    dimensions: int,
    hashes: Sequence[str],
) -> dict[str, Vector]:
    rows = conn.execute(
        "SELECT text_sha256, vector FROM embedding_cache WHERE provider = %s AND model = %s "
        "AND dimensions = %s AND text_sha256 = ANY(%s)",
        (provider, model, dimensions, list(hashes)),
    ).fetchall()
    return {str(h): _array(vec) for h, vec in rows}


def units_without_vectors(
    conn: psycopg.Connection[Any], sources: Sequence[str]
) -> set[tuple[str, str]]:
    rows = conn.execute(
        "SELECT DISTINCT u.source, u.path FROM units u "
        "LEFT JOIN unit_vectors v ON v.unit_id = u.id "
        "WHERE u.source = ANY(%s) AND v.unit_id IS NULL",
        (list(sources),),
    ).fetchall()
    return {(str(r[0]), str(r[1])) for r in rows}


def count_units(conn: psycopg.Connection[Any], with_vectors: bool) -> dict[str, int]:
    sql = {
        "files": "SELECT count(*) FROM files",
        "chunks": "SELECT count(*) FROM units WHERE kind = 'chunk'",
        "blocks": "SELECT count(*) FROM units WHERE kind = 'block'",
        "cache": "SELECT count(*) FROM embedding_cache",
    }
    if with_vectors:
        sql["vectors"] = "SELECT count(*) FROM unit_vectors"
    counts = {k: int(conn.execute(q).fetchone()[0]) for k, q in sql.items()}  # type: ignore[index]
    counts.setdefault("vectors", 0)
    return counts


def _unit(row: Sequence[Any]) -> Unit:
    uid, source, path, kind, start, end, text, heading, sha, mtime = row
    return Unit(
        id=int(uid),
        source=str(source),
        path=str(path),
        kind="block" if kind == "block" else "chunk",
        start_line=int(start),
        end_line=int(end),
        text=str(text),
        heading_path=tuple(str(heading).split("\n")) if heading else (),
        sha256=str(sha),
        file_mtime=float(mtime),
    )


_AROUND = (
    "SELECT s.id, n.id FROM units s CROSS JOIN LATERAL ("
    "SELECT m.id, m.start_line FROM units m WHERE m.file_id = s.file_id AND m.kind = 'block' "
    "AND m.start_line {op} s.start_line ORDER BY m.start_line {order} LIMIT %s) n "
    "WHERE s.kind = 'block' AND s.id = ANY(%s) ORDER BY s.id, n.start_line {order}"
)


def blocks_around(
    conn: psycopg.Connection[Any], ids: Sequence[int], reach: int
) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """``IndexReader.blocks_around``: the blocks of each one's file by line, nearest first."""
    sides: list[dict[int, list[int]]] = []
    for op, order in (("<", "DESC"), (">", "ASC")):
        found: dict[int, list[int]] = {int(i): [] for i in ids}
        for seed, other in conn.execute(_AROUND.format(op=op, order=order), (reach, list(ids))):
            found[int(seed)].append(int(other))
        sides.append(found)
    return {int(i): (tuple(sides[0][int(i)]), tuple(sides[1][int(i)])) for i in ids}


def index_stats(
    conn: psycopg.Connection[Any], schema: str, location: str, vector_index: str
) -> IndexStats:
    """``PostgresStore.stats``: counts, identity and backend of the schema's index."""
    has_vectors = ddl.has_relation(conn, schema, "unit_vectors")
    hnsw = ddl.has_hnsw(conn, schema)
    counts, meta = count_units(conn, has_vectors), read_meta(conn)
    return IndexStats(
        files=counts["files"],
        chunks=counts["chunks"],
        blocks=counts["blocks"],
        vectors=counts["vectors"],
        cached_embeddings=counts["cache"],
        identity=EmbedderIdentity.from_meta(meta),
        vector_backend="pgvector-hnsw" if hnsw else "pgvector-exact",
        db_path=location,
        extra={
            "tokenizer": meta.get("tokenizer", "porter"),
            "driver": "psycopg",
            "schema": schema,
            "vector_index": vector_index,
        },
    )
