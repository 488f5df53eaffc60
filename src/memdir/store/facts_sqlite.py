"""The facts store on SQLite: derived tables for ``memdir.facts`` (the only facts SQL).

The daily notes are the truth; these tables are rebuilt from them. They live in
the same database file as the index (``<home>/index/memdir.db``) but have their
own numbered migrations in the ``fact_migrations`` table, so the index's
migration list never sees them (and ``memdir index rebuild``, which deletes the
file, loses only access statistics: the facts come back from the notes).

Tables: ``fact_files`` (per-file stamps for incremental sync), ``fact_events``
(every parsed marker, keyed by file and line), ``facts`` (the current state of
every fact), ``facts_fts`` (FTS5 over fact text), ``fact_vectors`` (float32
BLOBs, searched with numpy: fact counts are small) and ``fact_meta`` (the
embedder identity). Every row carries a ``scope`` (``global`` or
``agent:<id>``); a store instance reads and writes one scope. Times are integer
microseconds since the epoch (UTC) so that SQL compares them exactly.

Connections come from ``memdir.store.connect`` (WAL, busy timeout, lock retries).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from memdir.errors import IndexMismatchError, StoreError
from memdir.store.base import EmbedderIdentity
from memdir.store.connect import Connection, connect, corrupt_error, is_locked, retry_locked

T = TypeVar("T")
Vector = npt.NDArray[np.float32]
FactMigration = tuple[str, Callable[[sqlite3.Connection], None]]

EventKind = Literal["fact", "forget", "reinforce"]


def to_us(when: datetime) -> int:
    """An aware datetime as integer microseconds since the epoch (naive means UTC)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delta = when - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(value: int) -> datetime:
    """Integer microseconds since the epoch as an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=value)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def identity_from_meta(meta: dict[str, str]) -> EmbedderIdentity | None:
    """The embedder identity recorded in ``fact_meta`` rows, or None before the first bind."""
    if "provider" not in meta:
        return None
    return EmbedderIdentity(meta["provider"], meta["model"], int(meta["dimensions"]))


def identity_rows(identity: EmbedderIdentity) -> list[tuple[str, str]]:
    """The ``fact_meta`` (key, value) rows that record ``identity``."""
    return [
        ("provider", identity.provider),
        ("model", identity.model),
        ("dimensions", str(identity.dimensions)),
    ]


def check_identity(location: str, recorded: EmbedderIdentity, wanted: EmbedderIdentity) -> None:
    """Raise ``IndexMismatchError`` when the facts at ``location`` were embedded otherwise."""
    if recorded != wanted:
        raise IndexMismatchError(
            f"the facts in {location!r} were embedded with {recorded.provider}/"
            f"{recorded.model} ({recorded.dimensions} dimensions), not {wanted.provider}/"
            f"{wanted.model} ({wanted.dimensions}); run `memdir index rebuild`"
        )


@dataclass(frozen=True)
class Fact:
    """One remembered statement and its history; the embedding stays in the store.

    ``valid_to`` is set when a later fact supersedes this one (it is that fact's
    ``valid_from``); ``source_path``/``source_line`` locate the fact's line in
    the workspace. ``access_count``/``last_access`` are usage statistics, the
    only state a rebuild from the notes does not restore.
    """

    id: str
    text: str
    category: str
    importance: int
    recorded_at: datetime
    valid_from: datetime
    valid_to: datetime | None
    supersedes: str | None
    source_path: str
    source_line: int
    access_count: int = 0
    last_access: datetime | None = None
    forgotten_at: datetime | None = None
    forgotten_reason: str | None = None

    @property
    def source(self) -> str:
        """``path:line`` of the fact's line in the workspace."""
        return f"{self.source_path}:{self.source_line}"

    @property
    def forgotten(self) -> bool:
        return self.forgotten_at is not None

    def valid_at(self, when: datetime) -> bool:
        """True when the fact held at ``when`` (forgetting is not considered)."""
        return self.valid_from <= when and (self.valid_to is None or when < self.valid_to)


@dataclass(frozen=True)
class FactEvent:
    """One marker line of a note: a saved fact, a forget or a reinforcement.

    ``text`` is the fact text (for a forget: the text shown on its line);
    ``category``/``supersedes`` belong to saves, ``importance`` to saves and
    reinforcements, ``reason`` to forgets.
    """

    path: str
    line: int
    kind: EventKind
    fact_id: str
    at: datetime
    text: str
    category: str = ""
    importance: int = 0
    supersedes: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class FactStamp:
    """What the facts store knows of one note: its hash and the stat it was read with."""

    path: str
    sha256: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class FactFilter:
    """Which facts a query admits.

    With ``as_of``: facts recorded by then and, unless ``include_superseded``,
    still valid then. Without: all facts, or only those never superseded.
    """

    as_of: datetime | None = None
    categories: tuple[str, ...] | None = None
    include_superseded: bool = False
    include_forgotten: bool = False


_F001 = [
    "CREATE TABLE fact_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE fact_files (scope TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
        size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, PRIMARY KEY (scope, path))
        WITHOUT ROWID""",
    """CREATE TABLE fact_events (scope TEXT NOT NULL, path TEXT NOT NULL, line INTEGER NOT NULL,
        kind TEXT NOT NULL, fact_id TEXT NOT NULL, at_us INTEGER NOT NULL, text TEXT NOT NULL,
        category TEXT NOT NULL, importance INTEGER NOT NULL, supersedes TEXT, reason TEXT,
        PRIMARY KEY (scope, path, line)) WITHOUT ROWID""",
    """CREATE TABLE facts (num INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL, text TEXT NOT NULL, category TEXT NOT NULL,
        importance INTEGER NOT NULL, recorded_us INTEGER NOT NULL,
        valid_from_us INTEGER NOT NULL, valid_to_us INTEGER, supersedes TEXT,
        source_path TEXT NOT NULL, source_line INTEGER NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0, last_access_us INTEGER,
        forgotten_us INTEGER, forgotten_reason TEXT)""",
    "CREATE INDEX facts_scope_category ON facts (scope, category)",
    """CREATE VIRTUAL TABLE facts_fts USING fts5(text, content='facts', content_rowid='num',
        tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
        INSERT INTO facts_fts (rowid, text) VALUES (new.num, new.text); END""",
    """CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
        INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.num, old.text); END""",
    """CREATE TRIGGER facts_fts_update AFTER UPDATE OF text ON facts BEGIN
        INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.num, old.text);
        INSERT INTO facts_fts (rowid, text) VALUES (new.num, new.text); END""",
    """CREATE TABLE fact_vectors (num INTEGER PRIMARY KEY REFERENCES facts(num) ON DELETE CASCADE,
        text_sha256 TEXT NOT NULL, embedding BLOB NOT NULL)""",
]


def f001_facts(conn: sqlite3.Connection) -> None:
    """Meta, file stamps, events, facts with FTS5, and fact vectors."""
    for statement in _F001:
        conn.execute(statement)


FACT_MIGRATIONS: list[FactMigration] = [("f001_facts", f001_facts)]

_COLUMNS = (
    "id, text, category, importance, recorded_us, valid_from_us, valid_to_us, supersedes, "
    "source_path, source_line, access_count, last_access_us, forgotten_us, forgotten_reason"
)


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _maybe_time(value: int | None) -> datetime | None:
    return None if value is None else from_us(value)


def _fact(row: Any) -> Fact:
    (fid, text, cat, imp, rec, vfrom, vto, sup, path, line, count, last, fus, reason) = row
    return Fact(
        fid, text, cat, imp, from_us(rec), from_us(vfrom), _maybe_time(vto), sup, path, line,
        count, _maybe_time(last), _maybe_time(fus), reason,
    )  # fmt: skip


def _fact_row(scope: str, fact: Fact) -> tuple[object, ...]:
    return (
        fact.id,
        scope,
        fact.text,
        fact.category,
        fact.importance,
        to_us(fact.recorded_at),
        to_us(fact.valid_from),
        None if fact.valid_to is None else to_us(fact.valid_to),
        fact.supersedes,
        fact.source_path,
        fact.source_line,
        fact.access_count,
        None if fact.last_access is None else to_us(fact.last_access),
        None if fact.forgotten_at is None else to_us(fact.forgotten_at),
        fact.forgotten_reason,
    )


def _event_values(e: FactEvent) -> tuple[object, ...]:
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
    )


def where_admitted(scope: str, filt: FactFilter, mark: str = "?") -> tuple[str, list[object]]:
    """SQL conditions (on table alias ``f``) selecting the facts ``filt`` admits.

    ``mark`` is the driver's parameter placeholder: ``?`` for sqlite3, ``%s`` for psycopg.
    """
    clauses: list[str] = [f"f.scope = {mark}"]
    args: list[object] = [scope]
    if not filt.include_forgotten:
        clauses.append("f.forgotten_us IS NULL")
    if filt.as_of is not None:
        clauses.append(f"f.valid_from_us <= {mark}")
        args.append(to_us(filt.as_of))
        if not filt.include_superseded:
            clauses.append(f"(f.valid_to_us IS NULL OR f.valid_to_us > {mark})")
            args.append(to_us(filt.as_of))
    elif not filt.include_superseded:
        clauses.append("f.valid_to_us IS NULL")
    if filt.categories is not None:
        marks = ", ".join([mark] * len(filt.categories)) or "NULL"  # IN (NULL) admits nothing
        clauses.append(f"f.category IN ({marks})")
        args.extend(filt.categories)
    return " AND ".join(clauses), args


@dataclass
class _Matrix:
    version: tuple[int, int]
    ids: list[str]
    vectors: Vector


class SqliteFactStore:
    """The facts tables of one SQLite file, for one ``scope``.

    ``__init__`` stores arguments; ``open()`` / ``connect()`` / ``with`` open the
    database and apply pending fact migrations. One connection per store, guarded
    by a lock, so threads may share a store; processes coordinate through WAL.
    """

    def __init__(self, path: Path | str, *, scope: str = "global") -> None:
        self.path = Path(path)
        self.scope = scope
        self._lock = threading.RLock()
        self._db: Connection | None = None
        self._matrix: _Matrix | None = None
        self._writes = 0

    @classmethod
    def open(cls, path: Path | str, *, scope: str = "global") -> SqliteFactStore:
        store = cls(path, scope=scope)
        store.connect()
        return store

    def connect(self) -> None:
        if self._db is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = connect(self.path, want_vec=False)
        try:
            self._write(self._migrate)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.conn.close()
                self._db = None

    def __enter__(self) -> SqliteFactStore:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS fact_migrations "
            "(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT name FROM fact_migrations")}
        unknown = done - {name for name, _ in FACT_MIGRATIONS}
        if unknown:
            raise StoreError(
                f"the facts tables in {str(self.path)!r} have migrations this memdir does not "
                f"know ({sorted(unknown)}); upgrade memdir or run `memdir index rebuild`"
            )
        for name, migrate in FACT_MIGRATIONS:
            if name not in done:
                migrate(conn)
                conn.execute(
                    "INSERT INTO fact_migrations (name, applied_at) VALUES (?, ?)",
                    (name, datetime.now(UTC).isoformat(timespec="seconds")),
                )

    # -- transactions --------------------------------------------------------------------

    def _conn(self) -> Connection:
        if self._db is None:
            raise StoreError(f"the facts store {str(self.path)!r} is not open; call open() first")
        return self._db

    def _run(self, fn: Callable[[sqlite3.Connection], T], write: bool) -> T:
        def attempt(conn: sqlite3.Connection) -> T:
            if not write:
                return fn(conn)
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            self._writes += 1
            return result

        with self._lock:
            db = self._conn()
            try:
                return retry_locked(lambda: attempt(db.conn), db.errors)
            except db.errors as exc:
                if is_locked(exc):
                    raise StoreError(f"the facts database {str(self.path)!r} is locked") from exc
                text = str(exc).lower()
                if "malformed" in text or "not a database" in text or "corrupt" in text:
                    raise corrupt_error(self.path, exc) from exc
                raise StoreError(f"facts database error in {str(self.path)!r}: {exc}") from exc

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return self._run(fn, write=False)

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return self._run(fn, write=True)

    # -- embedder identity ---------------------------------------------------------------

    @property
    def identity(self) -> EmbedderIdentity | None:
        meta = dict(self._read(lambda c: c.execute("SELECT key, value FROM fact_meta").fetchall()))
        return identity_from_meta(meta)

    def bind_identity(self, identity: EmbedderIdentity) -> None:
        """Record the embedder of the fact vectors, or check it matches the recorded one."""
        recorded = self.identity
        if recorded is None:
            rows = identity_rows(identity)
            self._write(
                lambda c: c.executemany("INSERT OR REPLACE INTO fact_meta VALUES (?, ?)", rows)
            )
        else:
            check_identity(str(self.path), recorded, identity)

    # -- files and events ----------------------------------------------------------------

    def file_stamps(self) -> dict[str, FactStamp]:
        rows = self._read(
            lambda c: c.execute(
                "SELECT path, sha256, size, mtime_ns FROM fact_files WHERE scope = ?", (self.scope,)
            ).fetchall()
        )
        return {r[0]: FactStamp(*r) for r in rows}

    def event_paths(self) -> set[str]:
        """Every file that holds recorded events (stamped by a sync or not)."""
        rows = self._read(
            lambda c: c.execute(
                "SELECT DISTINCT path FROM fact_events WHERE scope = ?", (self.scope,)
            ).fetchall()
        )
        return {r[0] for r in rows}

    def replace_file_events(
        self, changed: Sequence[tuple[FactStamp, Sequence[FactEvent]]], removed: Sequence[str]
    ) -> None:
        """Replace the events (and stamps) of changed files and drop removed files, atomically."""

        def write(conn: sqlite3.Connection) -> None:
            for path in [*removed, *(stamp.path for stamp, _ in changed)]:
                conn.execute(
                    "DELETE FROM fact_events WHERE scope = ? AND path = ?", (self.scope, path)
                )
                conn.execute(
                    "DELETE FROM fact_files WHERE scope = ? AND path = ?", (self.scope, path)
                )
            for stamp, events in changed:
                conn.execute(
                    "INSERT INTO fact_files VALUES (?, ?, ?, ?, ?)",
                    (self.scope, stamp.path, stamp.sha256, stamp.size, stamp.mtime_ns),
                )
                self._insert_events(conn, events)

        self._write(write)

    def _insert_events(self, conn: sqlite3.Connection, events: Iterable[FactEvent]) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO fact_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(self.scope, *_event_values(e)) for e in events],
        )

    def all_events(self) -> list[FactEvent]:
        rows = self._read(
            lambda c: c.execute(
                "SELECT path, line, kind, fact_id, at_us, text, category, importance, supersedes, "
                "reason FROM fact_events WHERE scope = ?",
                (self.scope,),
            ).fetchall()
        )
        return [FactEvent(*r[:4], from_us(r[4]), *r[5:]) for r in rows]  # type: ignore[call-arg]

    # -- facts ---------------------------------------------------------------------------

    def apply(
        self,
        events: Sequence[FactEvent] = (),
        upserts: Sequence[Fact] = (),
        deletes: Sequence[str] = (),
        vectors: dict[str, tuple[str, Vector]] | None = None,
    ) -> None:
        """In one transaction: record events, upsert facts, delete facts, store vectors.

        Upserts keep a fact's access statistics; ``vectors`` maps fact id to
        (sha256 of the embedded text, vector).
        """

        def write(conn: sqlite3.Connection) -> None:
            self._insert_events(conn, events)
            conn.executemany(
                f"INSERT INTO facts ({_COLUMNS.replace('id,', 'id, scope,', 1)}) "
                f"VALUES ({_marks(15)}) ON CONFLICT (id) DO UPDATE SET text = excluded.text, "
                "category = excluded.category, importance = excluded.importance, "
                "recorded_us = excluded.recorded_us, valid_from_us = excluded.valid_from_us, "
                "valid_to_us = excluded.valid_to_us, supersedes = excluded.supersedes, "
                "source_path = excluded.source_path, source_line = excluded.source_line, "
                "forgotten_us = excluded.forgotten_us, "
                "forgotten_reason = excluded.forgotten_reason",
                [_fact_row(self.scope, fact) for fact in upserts],
            )
            conn.executemany(
                "DELETE FROM facts WHERE id = ? AND scope = ?", [(i, self.scope) for i in deletes]
            )
            for fid, (sha, vector) in (vectors or {}).items():
                conn.execute(
                    "INSERT OR REPLACE INTO fact_vectors (num, text_sha256, embedding) "
                    "SELECT num, ?, ? FROM facts WHERE id = ?",
                    (sha, np.ascontiguousarray(vector, dtype=np.float32).tobytes(), fid),
                )

        self._write(write)

    def get_facts(self, ids: Iterable[str]) -> dict[str, Fact]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        sql = f"SELECT {_COLUMNS} FROM facts WHERE scope = ? AND id IN ({_marks(len(wanted))})"
        rows = self._read(lambda c: c.execute(sql, [self.scope, *wanted]).fetchall())
        return {row[0]: _fact(row) for row in rows}

    def list_facts(self, filt: FactFilter) -> list[Fact]:
        """Facts admitted by ``filt``, oldest first."""
        where, args = where_admitted(self.scope, filt)
        sql = f"SELECT {_COLUMNS} FROM facts f WHERE {where} ORDER BY f.recorded_us, f.id"
        return [_fact(row) for row in self._read(lambda c: c.execute(sql, args).fetchall())]

    def vector_shas(self) -> dict[str, str]:
        """Fact id -> sha256 of the text its stored vector was computed from."""
        rows = self._read(
            lambda c: c.execute(
                "SELECT f.id, v.text_sha256 FROM fact_vectors v JOIN facts f ON f.num = v.num "
                "WHERE f.scope = ?",
                (self.scope,),
            ).fetchall()
        )
        return dict(rows)

    def count_unembedded(self) -> int:
        """How many facts of this scope have no vector (cheap check before a backfill)."""
        sql = (
            "SELECT count(*) FROM facts f LEFT JOIN fact_vectors v ON v.num = f.num "
            "WHERE f.scope = ? AND v.num IS NULL"
        )
        return int(self._read(lambda c: c.execute(sql, (self.scope,)).fetchone()[0]))

    def record_access(self, ids: Sequence[str], when: datetime) -> None:
        self._write(
            lambda c: c.executemany(
                "UPDATE facts SET access_count = access_count + 1, last_access_us = ? WHERE id = ?",
                [(to_us(when), fid) for fid in ids],
            )
        )

    def clear(self) -> None:
        """Drop every fact, event and file stamp of this scope (before a rebuild)."""

        def clear(conn: sqlite3.Connection) -> None:
            for table in ("facts", "fact_events", "fact_files"):
                conn.execute(f"DELETE FROM {table} WHERE scope = ?", (self.scope,))
            if conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0:
                conn.execute("DELETE FROM fact_meta")

        self._write(clear)

    # -- search --------------------------------------------------------------------------

    def keyword_search(self, match: str, filt: FactFilter, limit: int) -> list[tuple[str, float]]:
        """FTS5 over admitted facts: (fact id, ``-bm25()`` >= 0), best first."""
        where, args = where_admitted(self.scope, filt)
        sql = (
            "SELECT f.id, -bm25(facts_fts) FROM facts_fts JOIN facts f ON f.num = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND {where} ORDER BY bm25(facts_fts) LIMIT ?"
        )
        rows = self._read(lambda c: c.execute(sql, [match, *args, limit]).fetchall())
        return [(fid, max(0.0, float(score))) for fid, score in rows]

    def vector_search(self, query: Vector, filt: FactFilter, limit: int) -> list[tuple[str, float]]:
        """Cosine over the vectors of admitted facts: (fact id, cosine), best first."""
        matrix = self._load_matrix()
        if not matrix.ids:
            return []
        where, args = where_admitted(self.scope, filt)
        allowed = {
            r[0]
            for r in self._read(
                lambda c: c.execute(f"SELECT f.id FROM facts f WHERE {where}", args).fetchall()
            )
        }
        rows = np.array([i for i, fid in enumerate(matrix.ids) if fid in allowed], dtype=np.intp)
        if len(rows) == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        scores = matrix.vectors[rows] @ (q / norm if norm > 0 else q)
        order = np.argsort(-scores, kind="stable")[:limit]
        return [(matrix.ids[rows[i]], float(scores[i])) for i in order]

    def _load_matrix(self) -> _Matrix:
        def version(conn: sqlite3.Connection) -> int:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

        current = (self._read(version), self._writes)
        if self._matrix is not None and self._matrix.version == current:
            return self._matrix
        rows = self._read(
            lambda c: c.execute(
                "SELECT f.id, v.embedding FROM fact_vectors v JOIN facts f ON f.num = v.num "
                "WHERE f.scope = ? ORDER BY f.num",
                (self.scope,),
            ).fetchall()
        )
        if rows:
            vectors = np.vstack([np.frombuffer(blob, dtype=np.float32) for _, blob in rows])
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            np.divide(vectors, norms, out=vectors, where=norms > 0)
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        self._matrix = _Matrix(current, [r[0] for r in rows], vectors)
        return self._matrix
