"""memdir.context: the token budget, flush-then-compact and session transcripts.

``check_context()`` measures a conversation against a ``ContextPolicy`` (flush
0.60, compact 0.70, warn 0.80, hard prune 0.90 of the window);
``compact()`` flushes durable facts through a callback, then summarises the
older turns into one user message marked as reference; ``emergency_compact()``
and ``trim_to_fit()`` drop old turns without any model call;
``prepare_context()`` / ``ContextWindow`` apply the right step on every turn.
``Session`` keeps the JSONL transcript of a conversation.
"""

from __future__ import annotations

from memdir.context.compaction import Compaction, compact
from memdir.context.flushing import Flush, FlushLedger, FlushResult
from memdir.context.policy import (
    ContextLevel,
    ContextPolicy,
    ContextStatus,
    check_context,
    input_budget,
)
from memdir.context.pruning import emergency_compact, trim_to_fit
from memdir.context.sessions import (
    CompactionRecord,
    Session,
    SessionInfo,
    SessionMessage,
    Transcript,
    list_sessions,
    new_session_id,
    record_compaction,
    validate_session_id,
)
from memdir.context.summary import SUMMARY_MARKER, SummaryCache, is_summary_message
from memdir.context.window import ContextEvent, ContextWindow, prepare_context

__all__ = [
    "SUMMARY_MARKER",
    "Compaction",
    "CompactionRecord",
    "ContextEvent",
    "ContextLevel",
    "ContextPolicy",
    "ContextStatus",
    "ContextWindow",
    "Flush",
    "FlushLedger",
    "FlushResult",
    "Session",
    "SessionInfo",
    "SessionMessage",
    "SummaryCache",
    "Transcript",
    "check_context",
    "compact",
    "emergency_compact",
    "input_budget",
    "is_summary_message",
    "list_sessions",
    "new_session_id",
    "prepare_context",
    "record_compaction",
    "trim_to_fit",
    "validate_session_id",
]
