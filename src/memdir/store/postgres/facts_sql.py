"""Schema and row mapping of the facts tables on PostgreSQL (used by ``facts.py``).

The tables follow ``store/sqlite/facts/`` and live in the index's schema (so
``PostgresStore.delete`` drops them with the index, as deleting the SQLite file
does; the daily notes bring them back). Their migrations are recorded in their
own ``fact_migrations`` table, apart from the index's ``migrations``.

Differences from SQLite, all internal: facts are keyed by ``(scope, id)``;
full text is a generated ``tsvector`` column (``english`` config: stemming
and stop words, no diacritic folding) with a GIN index; vectors are pgvector
``vector`` values of any dimension (one embedder per schema, checked through
``fact_meta``), scanned exactly, which is right for the few thousand facts an
agent has. Times are integer microseconds since the epoch, as in SQLite.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memdir.store.fact_records import Fact, FactEvent, FactFilter
from memdir.store.fact_rows import where_admitted
from memdir.store.times import from_us, to_us

_F001 = [
    "CREATE TABLE fact_meta (key text PRIMARY KEY, value text NOT NULL)",
    """
    CREATE TABLE fact_files (
        scope text NOT NULL, path text NOT NULL, sha256 text NOT NULL,
        size bigint NOT NULL, mtime_ns bigint NOT NULL,
        PRIMARY KEY (scope, path)
    )
    """,
    """
    CREATE TABLE fact_events (
        scope text NOT NULL, path text NOT NULL, line integer NOT NULL,
        kind text NOT NULL, fact_id text NOT NULL, at_us bigint NOT NULL, text text NOT NULL,
        category text NOT NULL, importance integer NOT NULL, supersedes text, reason text,
        PRIMARY KEY (scope, path, line)
    )
    """,
    """
    CREATE TABLE facts (
        scope text NOT NULL, id text NOT NULL, text text NOT NULL, category text NOT NULL,
        importance integer NOT NULL, recorded_us bigint NOT NULL,
        valid_from_us bigint NOT NULL, valid_to_us bigint, supersedes text,
        source_path text NOT NULL, source_line integer NOT NULL,
        access_count integer NOT NULL DEFAULT 0, last_access_us bigint,
        forgotten_us bigint, forgotten_reason text,
        fts tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED,
        PRIMARY KEY (scope, id)
    )
    """,
    "CREATE INDEX facts_scope_category ON facts (scope, category)",
    "CREATE INDEX facts_fts ON facts USING gin (fts)",
    """
    CREATE TABLE fact_vectors (
        scope text NOT NULL, id text NOT NULL, text_sha256 text NOT NULL,
        embedding vector NOT NULL,
        PRIMARY KEY (scope, id),
        FOREIGN KEY (scope, id) REFERENCES facts (scope, id) ON DELETE CASCADE
    )
    """,
]

FACT_MIGRATIONS: list[tuple[str, list[str]]] = [
    ("f001_facts", _F001),
    ("f002_event_until", ["ALTER TABLE fact_events ADD COLUMN until_us bigint"]),
]

COLUMNS = (
    "id, text, category, importance, recorded_us, valid_from_us, valid_to_us, supersedes, "
    "source_path, source_line, access_count, last_access_us, forgotten_us, forgotten_reason"
)

UPSERT_FACT = (
    f"INSERT INTO facts (scope, {COLUMNS}) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (scope, id) DO UPDATE SET text = excluded.text, "
    "category = excluded.category, importance = excluded.importance, "
    "recorded_us = excluded.recorded_us, valid_from_us = excluded.valid_from_us, "
    "valid_to_us = excluded.valid_to_us, supersedes = excluded.supersedes, "
    "source_path = excluded.source_path, source_line = excluded.source_line, "
    "forgotten_us = excluded.forgotten_us, forgotten_reason = excluded.forgotten_reason"
)  # access_count and last_access are kept: usage statistics survive an upsert

UPSERT_EVENT = (
    "INSERT INTO fact_events (scope, path, line, kind, fact_id, at_us, text, category, "
    "importance, supersedes, reason, until_us) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (scope, path, line) DO UPDATE SET kind = excluded.kind, "
    "fact_id = excluded.fact_id, at_us = excluded.at_us, text = excluded.text, "
    "category = excluded.category, importance = excluded.importance, "
    "supersedes = excluded.supersedes, reason = excluded.reason, until_us = excluded.until_us"
)

UPSERT_STAMP = (
    "INSERT INTO fact_files VALUES (%s, %s, %s, %s, %s) ON CONFLICT (scope, path) DO UPDATE "
    "SET sha256 = excluded.sha256, size = excluded.size, mtime_ns = excluded.mtime_ns"
)

UPSERT_VECTOR = (
    "INSERT INTO fact_vectors (scope, id, text_sha256, embedding) "
    "SELECT scope, id, %s, %s FROM facts WHERE scope = %s AND id = %s "
    "ON CONFLICT (scope, id) DO UPDATE SET text_sha256 = excluded.text_sha256, "
    "embedding = excluded.embedding"
)


def clean(text: str | None) -> str | None:
    """PostgreSQL text cannot hold NUL: store it as U+FFFD."""
    return None if text is None else text.replace("\x00", "\ufffd")


def _maybe_us(value: Any) -> int | None:
    return None if value is None else to_us(value)


def _maybe_time(value: Any) -> Any:
    return None if value is None else from_us(int(value))


def fact_from_row(row: Sequence[Any]) -> Fact:
    (fid, text, cat, imp, rec, vfrom, vto, sup, path, line, count, last, fus, reason) = row
    return Fact(
        str(fid), str(text), str(cat), int(imp), from_us(int(rec)), from_us(int(vfrom)),
        _maybe_time(vto), sup, str(path), int(line), int(count), _maybe_time(last),
        _maybe_time(fus), reason,
    )  # fmt: skip


def fact_values(source: str, fact: Fact) -> tuple[object, ...]:
    return (
        source,
        fact.id,
        clean(fact.text),
        clean(fact.category),
        fact.importance,
        to_us(fact.recorded_at),
        to_us(fact.valid_from),
        _maybe_us(fact.valid_to),
        fact.supersedes,
        fact.source_path,
        fact.source_line,
        fact.access_count,
        _maybe_us(fact.last_access),
        _maybe_us(fact.forgotten_at),
        clean(fact.forgotten_reason),
    )


def event_values(source: str, e: FactEvent) -> tuple[object, ...]:
    return (
        source, e.path, e.line, e.kind, e.fact_id, to_us(e.at), clean(e.text), clean(e.category),
        e.importance, e.supersedes, clean(e.reason), _maybe_us(e.until),
    )  # fmt: skip


def event_from_row(row: Sequence[Any]) -> FactEvent:
    path, line, kind, fid, at, text, cat, imp, sup, reason, until = row
    return FactEvent(
        str(path), int(line), kind, str(fid), from_us(int(at)), str(text), str(cat), int(imp),
        sup, reason, _maybe_time(until),
    )  # fmt: skip


def where(source: str, filt: FactFilter) -> tuple[str, list[object]]:
    """SQL conditions (on table alias ``f``) selecting the facts ``filt`` admits."""
    return where_admitted(source, filt, "%s")
