"""Read-side SQL of the PostgreSQL index: full-text and vector search, units and vectors.

Every function takes an open connection whose ``search_path`` starts with the
store's schema. Scores follow the ``IndexReader`` contract: keyword scores are
``ts_rank_cd(..., 32)`` (porter) or ``ts_rank(..., 32)`` (trigram), both in
[0, 1) and higher-is-better; vector scores are cosine similarities
``1 - (embedding <=> query)`` in [-1, 1].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from memdir.store.contracts import KeywordQuery, ScoredId, Unit, UnitKind
from memdir.store.postgres.fulltext import phrases_of, trigram_tsquery, websearch_text

if TYPE_CHECKING:
    import psycopg

Vector = npt.NDArray[np.float32]

_RANK = {
    "porter": (
        "ts_rank_cd(u.fts, q, 32)",
        "websearch_to_tsquery('english'::regconfig, %s)",
    ),
    "trigram": ("ts_rank(u.fts, q, 32)", "CAST(%s AS tsquery)"),
}
# The top %s of each kind in one statement, each kind with the plan of a one-kind query
# (one window over the matches of every kind measured ~25% slower at 100k units).
_KEYWORD_KINDS = (
    "SELECT k.kind, t.id, t.score FROM unnest(%s::text[]) WITH ORDINALITY AS k(kind, n), "
    "LATERAL (SELECT u.id, {rank} AS score FROM units u, {query} AS q "
    "WHERE u.fts @@ q AND u.kind = k.kind AND u.source = ANY(%s) "
    "ORDER BY score DESC, u.id LIMIT %s) AS t ORDER BY k.n, t.score DESC, t.id"
)
_NEAREST = (
    "SELECT unit_id, 1 - (embedding <=> %s) AS score FROM unit_vectors "
    "WHERE kind = %s AND source = ANY(%s) ORDER BY embedding <=> %s LIMIT %s"
)
_UNITS = (
    "SELECT u.id, u.source, u.path, u.kind, u.start_line, u.end_line, u.text, u.heading_path, "
    "u.sha256, f.mtime FROM units u JOIN files f ON f.id = u.file_id WHERE u.id = ANY(%s)"
)


def read_meta(conn: psycopg.Connection[Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta").fetchall()}


def keyword_search(
    conn: psycopg.Connection[Any],
    tokenizer: str,
    query: KeywordQuery,
    sources: Sequence[str],
    kinds: Sequence[UnitKind],
    limit: int,
) -> dict[UnitKind, list[ScoredId]]:
    """Full-text search over units in ``sources``: the best ``limit`` of each kind.

    One statement serves every kind; within a kind, ties in score go to the lower id.
    """
    found: dict[UnitKind, list[ScoredId]] = {kind: [] for kind in kinds}
    phrases = phrases_of(query)
    if not phrases or not found:
        return found
    if tokenizer == "trigram":
        text = trigram_tsquery(phrases)
        if not text:
            return found
    else:
        text = websearch_text(phrases)
    rank, parse = _RANK["trigram" if tokenizer == "trigram" else "porter"]
    sql = _KEYWORD_KINDS.format(rank=rank, query=parse)
    rows = conn.execute(sql, (list(found), text, list(sources), limit)).fetchall()
    for kind, uid, score in rows:
        found[kind].append(ScoredId(unit_id=int(uid), score=max(0.0, float(score))))
    return found


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
        rows = conn.execute(_NEAREST, (vector, kind, list(sources), vector, limit)).fetchall()
    hits = [ScoredId(unit_id=int(uid), score=_finite(score)) for uid, score in rows]
    return sorted(hits, key=lambda h: -h.score) if hnsw else hits


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
