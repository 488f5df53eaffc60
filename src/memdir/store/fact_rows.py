"""Row codecs of the facts tables: values to SQL parameters and rows back to values.

Owns how a ``Fact`` and a ``FactEvent`` become the parameters of an insert
(and a ``facts`` row becomes a ``Fact`` again), the ``WHERE`` conditions that
admit facts for a ``FactFilter`` (written for either driver's placeholder, so
the SQLite and PostgreSQL stores share them), and the ``fact_meta`` rows that
record the embedder identity, with the check that a store's vectors match it.
Times go through ``memdir.store.times``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from memdir.store.contracts import EmbedderIdentity
from memdir.store.fact_records import Fact, FactEvent, FactFilter, RetiredKind, RetiredLine
from memdir.store.times import from_us, maybe_from_us, maybe_to_us, to_us


def fact_from_row(row: Any) -> Fact:
    """A ``Fact`` from a row of ``sqlite.facts.FACT_COLUMNS``."""
    (fid, text, cat, imp, rec, vfrom, vto, sup, path, line, count, last, fus, reason) = row
    return Fact(
        fid, text, cat, imp, from_us(rec), from_us(vfrom), maybe_from_us(vto), sup, path, line,
        count, maybe_from_us(last), maybe_from_us(fus), reason,
    )  # fmt: skip


def fact_row(source: str, fact: Fact) -> tuple[object, ...]:
    """The parameters of ``sqlite.facts.UPSERT_FACT`` for ``fact`` in ``scope``."""
    return (
        fact.id,
        source,
        fact.text,
        fact.category,
        fact.importance,
        to_us(fact.recorded_at),
        to_us(fact.valid_from),
        maybe_to_us(fact.valid_to),
        fact.supersedes,
        fact.source_path,
        fact.source_line,
        fact.access_count,
        maybe_to_us(fact.last_access),
        maybe_to_us(fact.forgotten_at),
        fact.forgotten_reason,
    )


def event_values(e: FactEvent) -> tuple[object, ...]:
    """The ``fact_events`` columns after ``scope``, in table order."""
    return (
        e.path,
        e.line,
        e.kind,
        e.fact_id,
        to_us(e.at),
        e.text,
        e.category,
        e.importance,
        e.supersedes,
        e.reason,
        maybe_to_us(e.until),
    )


def event_from_row(row: Any) -> FactEvent:
    """A ``FactEvent`` from a row shaped like ``event_values``."""
    path, line, kind, fact_id, at, text, category, importance, supersedes, reason, until = row
    return FactEvent(
        path, line, kind, fact_id, from_us(at), text, category, importance, supersedes, reason,
        maybe_from_us(until),
    )  # fmt: skip


def now_us() -> int:
    """Now, in the stores' microseconds: what "current" means for a fact with an end."""
    return to_us(datetime.now(UTC))


def where_admitted(source: str, filt: FactFilter, mark: str = "?") -> tuple[str, list[object]]:
    """SQL conditions (on table alias ``f``) selecting the facts ``filt`` admits.

    ``mark`` is the driver's parameter placeholder: ``?`` for sqlite3, ``%s`` for psycopg.
    """
    clauses: list[str] = [f"f.scope = {mark}"]
    args: list[object] = [source]
    if not filt.include_forgotten:
        clauses.append("f.forgotten_us IS NULL")
    if filt.as_of is not None:
        clauses.append(f"f.valid_from_us <= {mark}")
        args.append(to_us(filt.as_of))
        if not filt.include_superseded:
            clauses.append(f"(f.valid_to_us IS NULL OR f.valid_to_us > {mark})")
            args.append(to_us(filt.as_of))
    elif not filt.include_superseded:  # current: never superseded, or ending later
        clauses.append(f"(f.valid_to_us IS NULL OR f.valid_to_us > {mark})")
        args.append(now_us())
    if filt.categories is not None:
        marks = ", ".join([mark] * len(filt.categories)) or "NULL"  # IN (NULL) admits nothing
        clauses.append(f"f.category IN ({marks})")
        args.extend(filt.categories)
    return " AND ".join(clauses), args


def identity_rows(identity: EmbedderIdentity) -> list[tuple[str, str]]:
    """The ``fact_meta`` (key, value) rows that record ``identity``."""
    return [
        ("provider", identity.provider),
        ("model", identity.model),
        ("dimensions", str(identity.dimensions)),
    ]


RETIRED_COLUMNS = (
    "e.scope, e.path, e.line, e.kind, e.fact_id, f.valid_from_us, f.valid_to_us, "
    "f.forgotten_us, f.forgotten_reason"
)


def retired_where() -> str:
    """``fact_events e LEFT JOIN facts f`` (same scope and id): the lines of retired facts
    (forgotten, superseded, or past their ``valid_until``), as of now."""
    return f"(e.kind = 'forget' OR f.valid_to_us <= {now_us()} OR f.forgotten_us IS NOT NULL)"


def retired_from_row(row: Any) -> RetiredLine:
    """A ``RETIRED_COLUMNS`` row as a ``RetiredLine``."""
    source, path, line, kind, fact_id, start, end, forgotten, reason = row
    retired: RetiredKind = "superseded"
    if kind == "forget":
        retired = "forget-record"
    elif forgotten is not None:
        retired = "forgotten"
    return RetiredLine(
        source=str(source), path=str(path), line=int(line), fact_id=str(fact_id), kind=retired,
        valid_from=maybe_from_us(start), valid_to=maybe_from_us(end),
        forgotten_at=maybe_from_us(forgotten), reason=None if reason is None else str(reason),
    )  # fmt: skip
