"""Vector search of the SQLite index: the engine (``search.py``), its in-memory matrices
(``matrix.py``, over the pure functions of ``codec.py``) and the graphs of large kinds
(``graph.py``)."""

from memdir.store.sqlite.vectors.search import VectorSearch

__all__ = ["VectorSearch"]
