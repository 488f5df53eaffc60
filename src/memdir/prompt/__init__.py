"""memdir.prompt: the system prompt and the context report, built from plain values.

The layer imports nothing of memdir but the leaves (errors, text); ``memdir.memory`` loads
the files and passes them in ``PromptInputs``.
"""

from __future__ import annotations

from memdir.prompt.builder import (
    ContextReport,
    FileReport,
    build_context_report,
    build_system_prompt,
)
from memdir.prompt.inputs import BootstrapEntry, BootstrapSource, PromptBudget, PromptInputs
from memdir.prompt.notes import NOTES_HEAD_MARKER, plan_recent_notes
from memdir.prompt.privacy import SESSION_KINDS, SessionKind, check_session_kind, redact_private
from memdir.prompt.sections import PERSONA_LINE, fence_data
from memdir.prompt.truncation import (
    MISSING_REQUIRED,
    REQUIRED_FILES,
    TRUNCATION_MARKER,
    FileStatus,
    InjectedFile,
    plan_injection,
    truncate_text,
)

__all__ = [
    "MISSING_REQUIRED",
    "NOTES_HEAD_MARKER",
    "PERSONA_LINE",
    "REQUIRED_FILES",
    "SESSION_KINDS",
    "TRUNCATION_MARKER",
    "BootstrapEntry",
    "BootstrapSource",
    "ContextReport",
    "FileReport",
    "FileStatus",
    "InjectedFile",
    "PromptBudget",
    "PromptInputs",
    "SessionKind",
    "build_context_report",
    "build_system_prompt",
    "check_session_kind",
    "fence_data",
    "plan_injection",
    "plan_recent_notes",
    "redact_private",
    "truncate_text",
]
