"""Units and queries tokenised by SQLite FTS5, the terms the PostgreSQL index ranks by.

The PostgreSQL index ranks by the BM25 of the SQLite backend (``bm25.py``), so it
must see the same terms: every unit's text and heading path go through FTS5's own
tokenizer (``porter unicode61 remove_diacritics 2`` or ``trigram``) in an in-memory
SQLite database of this process, and the counts are stored in ``units.terms``, a
``tsvector`` whose lexemes are the tokens and whose one position per lexeme is the
token's count in the unit (capped at 16,383, the largest position a ``tsvector``
holds; a 400-token chunk never comes near it). ``units.length`` is the unit's
token count. PostgreSQL's own text search configurations stem and drop stop words
differently, so they could not give SQLite's scores.

A token longer than ``MAX_LEXEME_BYTES`` (a ``tsvector`` lexeme holds at most 2 KB)
is stored as ``#`` and a hash of it: FTS5's ``unicode61`` never keeps ``#`` in a
token, and a trigram is 3 characters long, so no real token takes that form.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence

from memdir.store.contracts import KeywordQuery, Unit
from memdir.store.sqlite.keywords.terms import TOKENIZERS

MAX_LEXEME_BYTES = 255
MAX_COUNT = 16_383  # the largest position of a tsvector lexeme
MAX_CACHED_WORDS = 10_000


def lexeme(token: str) -> str:
    """The ``tsvector`` lexeme of an FTS5 token (a hash of a very long one)."""
    raw = token.encode("utf-8", "surrogatepass")
    if len(raw) <= MAX_LEXEME_BYTES:
        return token
    return "#" + hashlib.blake2b(raw, digest_size=16).hexdigest()


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_text(counts: Counter[str]) -> str:
    """``counts`` (lexeme -> occurrences) as a ``tsvector`` literal, the count as position."""
    return " ".join(f"{_quoted(term)}:{min(n, MAX_COUNT)}" for term, n in sorted(counts.items()))


class Fts5Terms:
    """FTS5's tokenizer in an in-memory SQLite database (thread-safe)."""

    def __init__(self, tokenizer: str) -> None:
        self.tokenizer = tokenizer
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(text, heading_path, "
            f"tokenize='{TOKENIZERS[tokenizer]}')"
        )
        self._conn.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(docs, instance)")
        self._lock = threading.Lock()
        self._words: dict[str, tuple[str, ...]] = {}

    def _load(self, docs: Sequence[tuple[str, str]]) -> None:
        self._conn.execute("DELETE FROM docs")
        self._conn.executemany(
            "INSERT INTO docs (rowid, text, heading_path) VALUES (?, ?, ?)",
            [(i + 1, text, heading) for i, (text, heading) in enumerate(docs)],
        )

    def of_units(self, units: Sequence[Unit]) -> list[Counter[str]]:
        """Each unit's lexemes and their counts over its text and heading path."""
        out: list[Counter[str]] = [Counter() for _ in units]
        with self._lock:
            self._load([(u.text, "\n".join(u.heading_path)) for u in units])
            rows = self._conn.execute("SELECT doc, term, count(*) FROM vocab GROUP BY doc, term")
            for doc, term, count in rows:
                out[int(doc) - 1][lexeme(str(term))] += int(count)
            self._conn.execute("DELETE FROM docs")
        return out

    def of_query(self, query: KeywordQuery) -> list[str]:
        """The lexemes of the query's tokens, term by term, in order (repeats kept)."""
        unknown = [w for w in dict.fromkeys(query.terms) if w not in self._words]
        if unknown:
            with self._lock:
                if len(self._words) > MAX_CACHED_WORDS:
                    self._words.clear()
                self._load([(word, "") for word in unknown])
                found: list[list[str]] = [[] for _ in unknown]
                rows = self._conn.execute("SELECT doc, term FROM vocab ORDER BY doc, offset")
                for doc, term in rows:
                    found[int(doc) - 1].append(lexeme(str(term)))
                self._conn.execute("DELETE FROM docs")
                self._words.update(zip(unknown, map(tuple, found), strict=True))
        return [token for word in query.terms for token in self._words.get(word, ())]
