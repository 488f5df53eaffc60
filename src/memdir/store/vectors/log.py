"""The ``vector_log`` table: which unit ids had their vectors changed, in order.

Each ``put``/``delete`` of a backend appends the touched ids inside the writer's
transaction; a ``VectorMirror`` reads the log to catch up with writes of any
process (see ``memdir.store.changelog``). ``reset_log`` empties it and bumps
``meta.vector_epoch`` so that every mirror reloads in full.
"""

from __future__ import annotations

from memdir.store.changelog import KEEP, ChangeLog

VECTOR_LOG = ChangeLog(table="vector_log", column="unit_id", epoch_key="vector_epoch")
EPOCH_KEY = VECTOR_LOG.epoch_key
LOG_KEEP = KEEP

create_log = VECTOR_LOG.create
has_log = VECTOR_LOG.exists
log_changes = VECTOR_LOG.record
reset_log = VECTOR_LOG.reset
