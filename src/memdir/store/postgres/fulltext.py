"""Keyword queries of the facts as PostgreSQL text queries.

A ``KeywordQuery`` is an OR of terms; each term becomes one phrase of a
``websearch_to_tsquery`` string (the ``english`` config), which PostgreSQL parses
without ever failing on user text. (The index ranks units by BM25: ``bm25.py``.)
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
