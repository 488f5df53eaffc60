"""Keyword queries as PostgreSQL text queries.

A ``KeywordQuery`` is an OR of terms; each term becomes one phrase:

* ``porter`` (the ``english`` config): the phrases become a ``websearch_to_tsquery``
  string, which PostgreSQL parses without ever failing on user text;
* ``trigram``: each phrase becomes the AND of its 3-character substrings, written as
  a ``tsquery`` literal with every lexeme quoted. Phrases shorter than 3 characters
  match nothing, as with FTS5's trigram tokenizer.
"""

from __future__ import annotations

from memdir.store.contracts import KeywordQuery


def phrases_of(query: KeywordQuery) -> list[str]:
    """The query's terms, one phrase each (blank terms are left out)."""
    return [term for term in query.terms if term.strip()]


def websearch_text(phrases: list[str]) -> str:
    """The OR of the phrases as input for ``websearch_to_tsquery``."""
    quoted = ('"' + " ".join(p.replace('"', " ").replace("-", " ").split()) + '"' for p in phrases)
    return " or ".join(quoted)


def trigrams(text: str) -> list[str]:
    """The distinct 3-character substrings of the lower-cased ``text``, in order."""
    low = text.lower()
    return list(dict.fromkeys(low[i : i + 3] for i in range(len(low) - 2)))


def _lexeme(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def trigram_tsquery(phrases: list[str]) -> str:
    """The OR of the phrases as a ``tsquery`` literal over trigram lexemes, each phrase the
    AND of its trigrams ('' when no phrase has one)."""
    grams = [trigrams(p) for p in phrases]
    return " | ".join("(" + " & ".join(_lexeme(g) for g in each) + ")" for each in grams if each)
