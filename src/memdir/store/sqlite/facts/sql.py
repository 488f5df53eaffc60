"""The facts store's SQL: every statement over ``index/facts.db``, as functions of a
connection and the scope (``global`` or ``agent:<id>``) whose rows they read or write.

The schema is ``FACT_MIGRATIONS`` (``store/sqlite/migrations.py``); the row codecs are in
``store/fact_rows.py`` (shared with PostgreSQL). ``store.py`` runs these functions inside
its transactions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from memdir.store.contracts import KeywordQuery
from memdir.store.fact_records import Fact, FactEvent, FactFilter, FactStamp, RetiredLine
from memdir.store.fact_rows import (
    RETIRED_COLUMNS,
    event_from_row,
    event_values,
    fact_from_row,
    fact_row,
    retired_from_row,
    retired_where,
    where_admitted,
)

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

VECTOR_LOG_KEEP = 10_000  # newest vector changes kept; a matrix further behind reloads


def marks(count: int) -> str:
    return ", ".join("?" * count)


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM fact_meta").fetchall())


def write_meta(conn: sqlite3.Connection, rows: Sequence[tuple[str, str]]) -> None:
    conn.executemany("INSERT OR REPLACE INTO fact_meta VALUES (?, ?)", rows)


def file_stamps(conn: sqlite3.Connection, source: str) -> dict[str, FactStamp]:
    rows = conn.execute(
        "SELECT path, sha256, size, mtime_ns FROM fact_files WHERE scope = ?", (source,)
    ).fetchall()
    return {r[0]: FactStamp(*r) for r in rows}


def event_paths(conn: sqlite3.Connection, source: str) -> set[str]:
    rows = conn.execute("SELECT DISTINCT path FROM fact_events WHERE scope = ?", (source,))
    return {r[0] for r in rows}


def replace_file_events(
    conn: sqlite3.Connection,
    source: str,
    changed: Sequence[tuple[FactStamp, Sequence[FactEvent]]],
    removed: Sequence[str],
) -> None:
    for path in [*removed, *(stamp.path for stamp, _ in changed)]:
        conn.execute("DELETE FROM fact_events WHERE scope = ? AND path = ?", (source, path))
        conn.execute("DELETE FROM fact_files WHERE scope = ? AND path = ?", (source, path))
    for stamp, events in changed:
        conn.execute(
            "INSERT INTO fact_files VALUES (?, ?, ?, ?, ?)",
            (source, stamp.path, stamp.sha256, stamp.size, stamp.mtime_ns),
        )
        insert_events(conn, source, events)


def insert_events(conn: sqlite3.Connection, source: str, events: Iterable[FactEvent]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO fact_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(source, *event_values(e)) for e in events],
    )


def all_events(conn: sqlite3.Connection, source: str, path: str | None) -> list[FactEvent]:
    sql = (
        "SELECT path, line, kind, fact_id, at_us, text, category, importance, supersedes, "
        "reason, until_us FROM fact_events WHERE scope = ?"
    )
    args = [source]
    if path is not None:
        sql, args = sql + " AND path = ?", [*args, path]
    return [event_from_row(r) for r in conn.execute(sql, args).fetchall()]


def write_stamps(conn: sqlite3.Connection, source: str, stamps: Sequence[FactStamp]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO fact_files VALUES (?, ?, ?, ?, ?)",
        [(source, s.path, s.sha256, s.size, s.mtime_ns) for s in stamps],
    )


def upsert_facts(conn: sqlite3.Connection, source: str, facts: Sequence[Fact]) -> None:
    conn.executemany(UPSERT_FACT, [fact_row(source, fact) for fact in facts])


def delete_facts(conn: sqlite3.Connection, source: str, ids: Sequence[str]) -> None:
    conn.executemany("DELETE FROM facts WHERE id = ? AND scope = ?", [(i, source) for i in ids])


def write_vector(
    conn: sqlite3.Connection, source: str, fact_id: str, sha: str, blob: bytes
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO fact_vectors (num, text_sha256, embedding) "
        "SELECT num, ?, ? FROM facts WHERE scope = ? AND id = ?",
        (sha, blob, source, fact_id),
    )


def prune_vector_log(conn: sqlite3.Connection) -> None:
    conn.execute(
        "DELETE FROM fact_vector_log WHERE seq <= (SELECT max(seq) FROM fact_vector_log) - ?",
        (VECTOR_LOG_KEEP,),
    )


def get_facts(conn: sqlite3.Connection, source: str, ids: Sequence[str]) -> dict[str, Fact]:
    sql = f"SELECT {FACT_COLUMNS} FROM facts WHERE scope = ? AND id IN ({marks(len(ids))})"
    return {row[0]: fact_from_row(row) for row in conn.execute(sql, [source, *ids]).fetchall()}


def list_facts(conn: sqlite3.Connection, source: str, filt: FactFilter) -> list[Fact]:
    where, args = where_admitted(source, filt)
    sql = f"SELECT {FACT_COLUMNS} FROM facts f WHERE {where} ORDER BY f.recorded_us, f.id"
    return [fact_from_row(row) for row in conn.execute(sql, args).fetchall()]


def admitted_ids(conn: sqlite3.Connection, source: str, filt: FactFilter) -> set[str]:
    where, args = where_admitted(source, filt)
    return {r[0] for r in conn.execute(f"SELECT f.id FROM facts f WHERE {where}", args)}


def retired_lines(
    conn: sqlite3.Connection, sources: Sequence[str], paths: Sequence[str] | None
) -> list[RetiredLine]:
    where = f"e.scope IN ({marks(len(sources))})"
    args: list[str] = list(sources)
    if paths is not None:
        where += f" AND e.path IN ({marks(len(paths))})"
        args += paths
    sql = (
        f"SELECT {RETIRED_COLUMNS} FROM fact_events e LEFT JOIN facts f "
        f"ON f.id = e.fact_id AND f.scope = e.scope WHERE {where} AND {retired_where()}"
    )
    return [retired_from_row(row) for row in conn.execute(sql, args).fetchall()]


def vector_shas(conn: sqlite3.Connection, source: str) -> dict[str, str]:
    rows = conn.execute(
        "SELECT f.id, v.text_sha256 FROM fact_vectors v JOIN facts f ON f.num = v.num "
        "WHERE f.scope = ?",
        (source,),
    ).fetchall()
    return dict(rows)


def count_unembedded(conn: sqlite3.Connection, source: str) -> int:
    sql = (
        "SELECT count(*) FROM facts f LEFT JOIN fact_vectors v ON v.num = f.num "
        "WHERE f.scope = ? AND v.num IS NULL"
    )
    return int(conn.execute(sql, (source,)).fetchone()[0])


def add_accesses(conn: sqlite3.Connection, pending: Sequence[tuple[int, int, str, str]]) -> None:
    """``(count, last access us, scope, fact id)`` rows added to the access statistics."""
    conn.executemany(
        "UPDATE facts SET access_count = access_count + ?, "
        "last_access_us = max(coalesce(last_access_us, 0), ?) WHERE scope = ? AND id = ?",
        pending,
    )


def clear(conn: sqlite3.Connection, source: str) -> None:
    for table in ("facts", "fact_events", "fact_files"):
        conn.execute(f"DELETE FROM {table} WHERE scope = ?", (source,))
    if conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0:
        conn.execute("DELETE FROM fact_meta")


def keyword_search(
    conn: sqlite3.Connection, source: str, query: KeywordQuery, filt: FactFilter, limit: int
) -> list[tuple[str, float]]:
    match = " OR ".join('"' + term.replace('"', '""') + '"' for term in query.terms)
    where, args = where_admitted(source, filt)
    sql = (
        "SELECT f.id, -bm25(facts_fts) FROM facts_fts JOIN facts f ON f.num = facts_fts.rowid "
        f"WHERE facts_fts MATCH ? AND {where} ORDER BY bm25(facts_fts) LIMIT ?"
    )
    rows = conn.execute(sql, [match, *args, limit]).fetchall()
    return [(fid, max(0.0, float(score))) for fid, score in rows]
