"""Where unit vectors live (a sqlite-vec ``vec0`` table or float32 BLOBs) and how they are searched.

Storage: both backends share one small interface so the store does not branch.
The backend is chosen when the first vector is stored and recorded in ``meta``;
an index keeps the backend it was built with.

* ``VecIndex``: a sqlite-vec ``vec0`` table (``kind`` partition key, ``source`` column).
* ``NumpyIndex``: rows of the plain ``unit_vectors`` table (no extension needed).

Search, for both: an exact float32 scan of 100k x 384 vectors is memory-bandwidth
bound (10-100 ms), so each process keeps a ``VectorMirror``: per unit kind, the
L2-normalised float32 rows plus one sign bit per dimension of the row minus the
kind's mean vector (384 bits = 48 bytes). A query ranks all rows by Hamming
distance of the sign bits (XOR + popcount over a few MB), then rescores the
nearest ``max(RESCORE_MIN, RESCORE_PER_RESULT * limit)`` rows with exact float32
cosine; scores returned are exact cosines. Collections no larger than that budget
are scored exactly.

Freshness: every ``put``/``delete`` appends the touched unit ids to
``vector_log`` (created with the schema) inside the writer's transaction. Before a search
the mirror reads the log's high-water mark (one small query); new entries are
re-read by id and applied in place, so writes of this and other processes are
seen without a full reload. ``clear`` bumps ``meta.vector_epoch``, which forces
a full reload, as does a log pruned past what the mirror has seen.

Modules: ``codec`` (array types, sign bits, decoding), ``log`` (``vector_log``),
``matrix`` (``UnitMatrix``, the two-stage search), ``mirror`` (``VectorMirror``)
and ``backends`` (``VectorIndex``, ``VecIndex``, ``NumpyIndex``). Import from
this package; the split is an implementation detail.
"""

from memdir.store.vectors.backends import VEC_TABLE, NumpyIndex, VecIndex, VectorIndex
from memdir.store.vectors.codec import (
    Rows,
    Signs,
    StoredRow,
    Vector,
    hamming,
    nearest_rows,
    pack_signs,
)
from memdir.store.vectors.log import (
    EPOCH_KEY,
    LOG_KEEP,
    create_log,
    has_log,
    log_changes,
    reset_log,
)
from memdir.store.vectors.matrix import RESCORE_MIN, RESCORE_PER_RESULT, UnitMatrix
from memdir.store.vectors.mirror import RELOAD_SHARE, StoredVectors, VectorMirror

__all__ = [
    "EPOCH_KEY",
    "LOG_KEEP",
    "RELOAD_SHARE",
    "RESCORE_MIN",
    "RESCORE_PER_RESULT",
    "VEC_TABLE",
    "NumpyIndex",
    "Rows",
    "Signs",
    "StoredRow",
    "StoredVectors",
    "UnitMatrix",
    "VecIndex",
    "Vector",
    "VectorIndex",
    "VectorMirror",
    "create_log",
    "hamming",
    "has_log",
    "log_changes",
    "nearest_rows",
    "pack_signs",
    "reset_log",
]
