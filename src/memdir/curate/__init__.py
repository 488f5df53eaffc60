"""memdir.curate: memory that curates itself.

- ``extract_after_conversation()`` / ``ExtractionRunner.schedule_extraction()``:
  after a conversation, a model (or the heuristic) decides what goes to the
  daily note, MEMORY.md, USER.md and the facts store (through the caller's
  ``save_fact`` callback); per-agent lock and cooldown across processes.
- ``consolidate()`` ("emergence"): stable entries of the last days' daily notes
  move into MEMORY.md; ``Scheduler`` runs it on a cron expression;
  ``read_heartbeat()`` gives scheduled runs their rules.
- ``end_session()``: the last messages become ``memory/YYYY-MM-DD-<slug>.md``.
- ``record_tool_error()`` / ``record_correction()`` / ``detect_correction()`` /
  ``learnings_for_prompt()``: lessons for the system prompt.

Every rewrite of MEMORY.md or USER.md goes through the loss guard (``guard``).
Without a model every feature works at a documented lower quality (see each
module's docstring and docs/curation.md). This layer imports llm/, workspace/
and the text rules of facts/ (credential redaction, how two statements compare);
facts are stored through a callback, never through the facts store.
"""

from __future__ import annotations

from memdir.curate.consolidation import (
    ConsolidationMerge,
    ConsolidationPlan,
    ConsolidationResult,
    consolidate,
    promote_heuristically,
)
from memdir.curate.extraction import (
    ExtractedFact,
    ExtractionDecision,
    ExtractionPolicy,
    ExtractionResult,
    ExtractionTrigger,
    extract_after_conversation,
    prepare_transcript,
    transcript_messages,
)
from memdir.curate.guard import FileUpdate, LossCheck, check_loss, memory_entries, replace_guarded
from memdir.curate.heuristics import (
    HeuristicFact,
    SaveFact,
    heuristic_extract,
    summarise_extractively,
)
from memdir.curate.learnings import (
    detect_correction,
    learnings_for_prompt,
    record_correction,
    record_tool_error,
)
from memdir.curate.runner import ExtractionRunner
from memdir.curate.scheduler import DEFAULT_CRON, JobRun, Scheduler, read_heartbeat
from memdir.curate.session_end import SessionNote, end_session, sanitise_slug

__all__ = [
    "DEFAULT_CRON",
    "ConsolidationMerge",
    "ConsolidationPlan",
    "ConsolidationResult",
    "ExtractedFact",
    "ExtractionDecision",
    "ExtractionPolicy",
    "ExtractionResult",
    "ExtractionRunner",
    "ExtractionTrigger",
    "FileUpdate",
    "HeuristicFact",
    "JobRun",
    "LossCheck",
    "SaveFact",
    "Scheduler",
    "SessionNote",
    "check_loss",
    "consolidate",
    "detect_correction",
    "end_session",
    "extract_after_conversation",
    "heuristic_extract",
    "learnings_for_prompt",
    "memory_entries",
    "prepare_transcript",
    "promote_heuristically",
    "read_heartbeat",
    "record_correction",
    "record_tool_error",
    "replace_guarded",
    "sanitise_slug",
    "summarise_extractively",
    "transcript_messages",
]
