"""The ``file_terms`` table: every unit's terms, as FTS5 tokenised them, one row per file.

Feeds ``memdir.store.keywords`` (BM25 ranked in memory). The terms come from FTS5's own
tokenizer: the file's units go into a temporary FTS5 table with the index's tokenizer
and are read back through ``fts5vocab`` (``instance``), so every term, count and unit
length is the one FTS5's ``bm25()`` uses. A term is stored as the 64-bit BLAKE2b hash
of its text: mirrors in any process look terms up without a shared dictionary (two
terms sharing a hash, about 1 in 10^7 for a million distinct terms, would share their
postings).

A row holds numpy buffers: ``units`` (int64 unit ids, ascending), ``kinds`` (int8:
0 chunk, 1 block), ``lengths`` (int32 tokens in the unit's text and heading path),
``sizes`` (int32 distinct terms per unit), then unit after unit ``terms`` (int64
hashes) and ``counts`` (int32 occurrences). Each write and delete is logged in
``term_log`` (by file id) for the mirrors.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.store.changelog import ChangeLog

TERM_LOG = ChangeLog(table="term_log", column="file_id", epoch_key="term_epoch")
KINDS = ("chunk", "block")  # kind code = position
TERMS_TOKENIZER = "porter"  # the tokenizer whose terms are kept (trigram: FTS5 alone)
MAX_CACHED_HASHES = 500_000

_TEMP = "temp.memdir_tokens"
_TEMP_VOCAB = "temp.memdir_tokens_vocab"
_COLUMNS = ("units", "kinds", "lengths", "sizes", "terms", "counts")


@dataclass(frozen=True)
class FileTerms:
    """One file's units and their postings (see the module docstring for the layout)."""

    file_id: int
    units: npt.NDArray[np.int64]
    kinds: npt.NDArray[np.int8]
    lengths: npt.NDArray[np.int32]
    sizes: npt.NDArray[np.int32]
    terms: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int32]
    source: str = ""  # filled when read back


def has_terms(conn: sqlite3.Connection) -> bool:
    return TERM_LOG.exists(conn)


def create_terms(conn: sqlite3.Connection) -> None:
    """The ``file_terms`` table and its log (created with the schema, like the FTS table)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS file_terms ("
        "file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE, "
        + ", ".join(f"{c} BLOB NOT NULL" for c in _COLUMNS)
        + ")"
    )
    TERM_LOG.create(conn)


def term_hash(term: str) -> int:
    """A term's key: the first 8 bytes of its BLAKE2b digest, as a signed int64."""
    digest = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


class Tokens:
    """FTS5's tokenizer on one connection, through a temporary FTS5 table of its own.

    ``spec`` is the FTS5 ``tokenize`` argument of the index (porter unicode61 ...).
    """

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._hashes: dict[str, int] = {}

    def _prepare(self, conn: sqlite3.Connection) -> None:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {_TEMP} USING fts5("
            f"text, heading_path, tokenize='{self.spec}')"
        )
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {_TEMP_VOCAB} "
            "USING fts5vocab(temp, memdir_tokens, instance)"
        )
        conn.execute(f"DELETE FROM {_TEMP}")

    def hash(self, term: str) -> int:
        found = self._hashes.get(term)
        if found is None:
            if len(self._hashes) >= MAX_CACHED_HASHES:
                self._hashes.clear()
            found = self._hashes[term] = term_hash(term)
        return found

    def of_texts(self, conn: sqlite3.Connection, texts: Sequence[str]) -> list[list[str]]:
        """The tokens of each text, in order (what a quoted FTS5 phrase of it matches)."""
        self._prepare(conn)
        conn.executemany(
            f"INSERT INTO {_TEMP} (rowid, text, heading_path) VALUES (?, ?, '')",
            [(i + 1, text) for i, text in enumerate(texts)],
        )
        out: list[list[str]] = [[] for _ in texts]
        rows = conn.execute(f"SELECT doc, term FROM {_TEMP_VOCAB} ORDER BY doc, offset")
        for doc, term in rows:
            out[int(doc) - 1].append(str(term))
        conn.execute(f"DELETE FROM {_TEMP}")
        return out

    def of_file(self, conn: sqlite3.Connection, file_id: int) -> FileTerms:
        """The postings of one file's units, read from ``units`` as they stand."""
        self._prepare(conn)
        units = conn.execute(
            "SELECT id, kind FROM units WHERE file_id = ? ORDER BY id", (file_id,)
        ).fetchall()
        conn.execute(
            f"INSERT INTO {_TEMP} (rowid, text, heading_path) "
            "SELECT id, text, heading_path FROM units WHERE file_id = ?",
            (file_id,),
        )
        docs: list[int] = []
        terms: list[int] = []
        counts: list[int] = []
        rows = conn.execute(
            f"SELECT doc, term, count(*) FROM {_TEMP_VOCAB} GROUP BY doc, term ORDER BY doc, term"
        )
        hash_of = self.hash
        for doc, term, count in rows:
            docs.append(doc)
            terms.append(hash_of(term))
            counts.append(count)
        conn.execute(f"DELETE FROM {_TEMP}")
        ids = np.array([u[0] for u in units], dtype=np.int64)
        owner = np.searchsorted(ids, np.array(docs, dtype=np.int64))
        count_array = np.array(counts, dtype=np.int32)
        return FileTerms(
            file_id=file_id,
            units=ids,
            kinds=np.array([KINDS.index(u[1]) for u in units], dtype=np.int8),
            lengths=np.bincount(owner, weights=count_array, minlength=len(ids)).astype(np.int32),
            sizes=np.bincount(owner, minlength=len(ids)).astype(np.int32),
            terms=np.array(terms, dtype=np.int64),
            counts=count_array,
        )


def write_terms(conn: sqlite3.Connection, tokens: Tokens, file_id: int) -> None:
    """(Re)write the terms row of ``file_id`` from its units and log the change."""
    found = tokens.of_file(conn, file_id)
    conn.execute(
        f"INSERT OR REPLACE INTO file_terms (file_id, {', '.join(_COLUMNS)}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (file_id, *(getattr(found, c).tobytes() for c in _COLUMNS)),
    )
    TERM_LOG.record(conn, [file_id])


def delete_terms(conn: sqlite3.Connection, file_id: int) -> None:
    conn.execute("DELETE FROM file_terms WHERE file_id = ?", (file_id,))
    TERM_LOG.record(conn, [file_id])


def read_terms(conn: sqlite3.Connection, file_ids: Sequence[int] | None) -> Iterable[FileTerms]:
    """Rows of ``file_ids`` (absent ones are missing), or every row when None."""
    sql = (
        f"SELECT t.file_id, f.source, {', '.join('t.' + c for c in _COLUMNS)} "
        "FROM file_terms t JOIN files f ON f.id = t.file_id"
    )
    if file_ids is None:
        rows: Iterable[tuple[Any, ...]] = conn.execute(sql)
    else:
        rows = (
            row
            for fid in file_ids
            for row in conn.execute(f"{sql} WHERE t.file_id = ?", (fid,)).fetchall()
        )
    for file_id, source, units, kinds, lengths, sizes, terms, counts in rows:
        yield FileTerms(
            file_id=int(file_id),
            units=np.frombuffer(units, dtype=np.int64),
            kinds=np.frombuffer(kinds, dtype=np.int8),
            lengths=np.frombuffer(lengths, dtype=np.int32),
            sizes=np.frombuffer(sizes, dtype=np.int32),
            terms=np.frombuffer(terms, dtype=np.int64),
            counts=np.frombuffer(counts, dtype=np.int32),
            source=str(source),
        )


PENDING_KEY = "terms_pending"  # meta: an index made before kept terms still gains them
_MISSING = "SELECT id FROM files WHERE id NOT IN (SELECT file_id FROM file_terms)"


def mark_pending(conn: sqlite3.Connection) -> None:
    """After ``create_terms`` on an index that already has files: they need their terms."""
    if conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, '1')", (PENDING_KEY,))


def count_missing(conn: sqlite3.Connection) -> int:
    return int(conn.execute(f"SELECT count(*) FROM ({_MISSING})").fetchone()[0])


def backfill_terms(conn: sqlite3.Connection, tokens: Tokens, limit: int) -> int:
    """Write the terms rows of up to ``limit`` files that have none; returns how many.

    The caller runs batches, each in a transaction of its own, so other writers get
    their turn; the batch that finds nothing left clears ``PENDING_KEY``. Until then
    keyword search ranks with FTS5 (the in-memory index sees units it has no terms for).
    """
    missing = [int(r[0]) for r in conn.execute(f"{_MISSING} LIMIT ?", (limit,))]
    for file_id in missing:
        write_terms(conn, tokens, file_id)
    if not missing:
        conn.execute("DELETE FROM meta WHERE key = ?", (PENDING_KEY,))
    return len(missing)
