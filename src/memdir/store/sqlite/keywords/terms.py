"""The ``file_terms`` table: every unit's terms, as FTS5 tokenises them, one row per file.

Feeds the ``KeywordRanker`` (BM25 ranked in memory). The terms come from FTS5's own
tokenizer: units go into a temporary FTS5 table with the index's tokenizer and are
read back through ``fts5vocab`` (``instance``), so every term, count and unit length
is the one FTS5's ``bm25()`` would use over ``text`` and ``heading_path`` (the test
oracle: ``tests/store/store_support.py``). A term is stored as the 64-bit BLAKE2b hash
of its text: copies in any process look terms up without a shared dictionary (two
terms sharing a hash, about 1 in 10^7 for a million distinct terms, would share their
postings).

A row holds numpy buffers: ``units`` (int64 unit ids, ascending), ``kinds`` (int8
codes, positions in ``UNIT_KINDS``), ``lengths`` (int32 tokens in the unit's text and
heading path), ``sizes`` (int32 distinct terms per unit), then unit after unit
``terms`` (int64 hashes) and ``counts`` (int32 occurrences).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.store.contracts import UNIT_KINDS

TOKENIZERS = {
    "porter": "porter unicode61 remove_diacritics 2",
    "trigram": "trigram",
}
MAX_CACHED_HASHES = 500_000

_TEMP = "temp.memdir_tokens"
_TEMP_VOCAB = "temp.memdir_tokens_vocab"
COLUMNS = ("units", "kinds", "lengths", "sizes", "terms", "counts")
TABLE = (
    "CREATE TABLE IF NOT EXISTS file_terms ("
    "file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE, "
    + ", ".join(f"{c} BLOB NOT NULL" for c in COLUMNS)
    + ")"
)

IdArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class FileTerms:
    """One file's units and their postings (see the module docstring for the layout)."""

    file_id: int
    units: IdArray
    kinds: npt.NDArray[np.int8]
    lengths: npt.NDArray[np.int32]
    sizes: npt.NDArray[np.int32]
    terms: IdArray
    counts: npt.NDArray[np.int32]
    source: str = ""  # filled when read back

    def only(self, wanted: npt.NDArray[np.bool_]) -> FileTerms:
        """The units where ``wanted`` (one flag per unit) holds, with their postings."""
        postings = np.repeat(wanted, self.sizes)
        return FileTerms(
            file_id=self.file_id,
            units=self.units[wanted],
            kinds=self.kinds[wanted],
            lengths=self.lengths[wanted],
            sizes=self.sizes[wanted],
            terms=self.terms[postings],
            counts=self.counts[postings],
            source=self.source,
        )


def term_hash(term: str) -> int:
    """A term's key: the first 8 bytes of its BLAKE2b digest, as a signed int64."""
    digest = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


class Tokens:
    """FTS5's tokenizer on one connection, through a temporary FTS5 table of its own.

    ``tokenizer`` names an entry of ``TOKENIZERS``.
    """

    def __init__(self, tokenizer: str) -> None:
        self.spec = TOKENIZERS[tokenizer]
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
        """The tokens of each text, in order."""
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

    def of_units(self, conn: sqlite3.Connection, file_id: int, ids: Sequence[int]) -> FileTerms:
        """The postings of units ``ids`` of one file (ascending ids), read from ``units``."""
        self._prepare(conn)
        units: list[tuple[int, str]] = []
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            marks = ", ".join("?" * len(batch))
            units += conn.execute(
                f"SELECT id, kind FROM units WHERE id IN ({marks}) ORDER BY id", batch
            ).fetchall()
            conn.execute(
                f"INSERT INTO {_TEMP} (rowid, text, heading_path) "
                f"SELECT id, text, heading_path FROM units WHERE id IN ({marks})",
                batch,
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
        unit_ids = np.array([u[0] for u in units], dtype=np.int64)
        owner = np.searchsorted(unit_ids, np.array(docs, dtype=np.int64))
        count_array = np.array(counts, dtype=np.int32)
        return FileTerms(
            file_id=file_id,
            units=unit_ids,
            kinds=np.array([UNIT_KINDS.index(u[1]) for u in units], dtype=np.int8),
            lengths=np.bincount(owner, weights=count_array, minlength=len(units)).astype(np.int32),
            sizes=np.bincount(owner, minlength=len(units)).astype(np.int32),
            terms=np.array(terms, dtype=np.int64),
            counts=count_array,
        )


def write_terms(
    conn: sqlite3.Connection, tokens: Tokens, file_id: int, before: FileTerms | None = None
) -> None:
    """(Re)write the terms row of ``file_id`` from its units as they stand.

    ``before`` is the row as it was: units it holds keep their postings (a kept unit
    has the same text), so only new units are tokenised.
    """
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM units WHERE file_id = ?", (file_id,))]
    ids.sort()
    kept: FileTerms | None = None
    if before is not None and len(before.units):
        kept = before.only(np.isin(before.units, ids))
        known = set(kept.units.tolist())
        ids = [i for i in ids if i not in known]
    found = tokens.of_units(conn, file_id, ids)
    if kept is not None and len(kept.units):
        found = _joined(kept, found)  # kept ids are older, so lower: the order holds
    conn.execute(
        f"INSERT OR REPLACE INTO file_terms (file_id, {', '.join(COLUMNS)}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (file_id, *(getattr(found, c).tobytes() for c in COLUMNS)),
    )


def _joined(first: FileTerms, second: FileTerms) -> FileTerms:
    units, kinds, lengths, sizes, terms, counts = (
        np.concatenate([getattr(first, c), getattr(second, c)]) for c in COLUMNS
    )
    return FileTerms(second.file_id, units, kinds, lengths, sizes, terms, counts)


def read_terms(conn: sqlite3.Connection, file_ids: Sequence[int] | None) -> Iterable[FileTerms]:
    """Rows of ``file_ids`` (absent ones are missing), or every row when None."""
    sql = (
        f"SELECT t.file_id, f.source, {', '.join('t.' + c for c in COLUMNS)} "
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


def count_postings(conn: sqlite3.Connection) -> int:
    """Postings in the whole table (from the blobs' lengths; their bytes are not read)."""
    row = conn.execute("SELECT coalesce(sum(length(counts)), 0) FROM file_terms").fetchone()
    return int(row[0]) // np.dtype(np.int32).itemsize


MISSING = "SELECT id FROM files WHERE id NOT IN (SELECT file_id FROM file_terms)"


def backfill_terms(conn: sqlite3.Connection, tokens: Tokens, limit: int) -> int:
    """Write the terms rows of up to ``limit`` files that have none; returns how many."""
    missing = [int(r[0]) for r in conn.execute(f"{MISSING} LIMIT ?", (limit,))]
    for file_id in missing:
        write_terms(conn, tokens, file_id)
    return len(missing)
