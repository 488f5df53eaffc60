"""Keyword searches as the tests write them: words separated by spaces, one kind at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memdir.store import KeywordQuery, ScoredId, UnitKind


def words(text: str) -> KeywordQuery:
    """A query of the whitespace-separated words of ``text`` (each word one term)."""
    return KeywordQuery(terms=tuple(text.split()))


def keyword_hits(
    store: Any, text: str, sources: Sequence[str], kind: UnitKind, limit: int
) -> list[ScoredId]:
    """``store.keyword_search`` for one kind: its list of hits."""
    return list(store.keyword_search(words(text), sources, (kind,), limit)[kind])
