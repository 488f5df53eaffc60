"""memdir.prompt: the system prompt and the context report, built from plain values.

The layer imports nothing of memdir but ``memdir.errors``; ``memory.py`` loads
the files and passes them in ``PromptInputs``.
"""

from __future__ import annotations

from memdir.prompt.builder import (
    ContextReport,
    FileReport,
    build_context_report,
    build_system_prompt,
    estimate_tokens,
)
from memdir.prompt.inputs import BootstrapEntry, BootstrapSource, PromptBudget, PromptInputs
from memdir.prompt.sections import PERSONA_LINE
from memdir.prompt.truncation import (
    TRUNCATION_MARKER,
    FileStatus,
    InjectedFile,
    plan_injection,
    truncate_text,
)

__all__ = [
    "PERSONA_LINE",
    "TRUNCATION_MARKER",
    "BootstrapEntry",
    "BootstrapSource",
    "ContextReport",
    "FileReport",
    "FileStatus",
    "InjectedFile",
    "PromptBudget",
    "PromptInputs",
    "build_context_report",
    "build_system_prompt",
    "estimate_tokens",
    "plan_injection",
    "truncate_text",
]
