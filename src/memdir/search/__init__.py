"""memdir.search: hybrid retrieval (BM25 + vectors), fusion, boosts and narrow snippets."""

from __future__ import annotations

from memdir.search.hybrid import search
from memdir.search.query import keyword_query
from memdir.search.results import FusionMode, SearchHit, SearchOptions, SearchResults

__all__ = [
    "FusionMode",
    "SearchHit",
    "SearchOptions",
    "SearchResults",
    "keyword_query",
    "search",
]
