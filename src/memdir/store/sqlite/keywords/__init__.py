"""Keyword search of the SQLite index: the kept terms (``terms.py``) and the in-memory
BM25 engine over them (``ranker.py``)."""

from memdir.store.sqlite.keywords.ranker import KeywordRanker

__all__ = ["KeywordRanker"]
