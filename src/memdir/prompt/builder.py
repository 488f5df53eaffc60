"""Building the system prompt and the context report from ``PromptInputs``.

Both are pure functions of their inputs: the same inputs give the same text.
Section order: base prompt, safety, tools, date and time, runtime, project
context, truncation note, memory, learnings, high-salience facts, skills.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memdir.prompt import sections
from memdir.prompt.inputs import PromptBudget, PromptInputs
from memdir.prompt.truncation import FileStatus, InjectedFile, plan_injection


def estimate_tokens(chars: int) -> int:
    """Estimate tokens as ceil(chars / 4), the rule used for every count in the report."""
    return math.ceil(chars / 4)


def _render(inputs: PromptInputs) -> tuple[str, list[InjectedFile]]:
    planned = plan_injection(inputs.bootstrap_files, inputs.budget)
    parts = [
        inputs.base_prompt.strip(),
        sections.SAFETY,
        sections.render_tools(inputs.tool_names),
        sections.render_datetime(inputs.now, inputs.timezone),
        sections.render_runtime(inputs.runtime),
        sections.render_project_context(planned),
        sections.render_truncation_note(planned),
        sections.render_memory(inputs.daily_note_count, inputs.memory_dir, inputs.tool_names),
        sections.render_learnings(inputs.learnings),
        sections.render_facts(inputs.facts),
        sections.render_skills(inputs.skills),
    ]
    return "\n\n".join(part for part in parts if part) + "\n", planned


def build_system_prompt(inputs: PromptInputs) -> str:
    """Return the system prompt for ``inputs``."""
    prompt, _ = _render(inputs)
    return prompt


@dataclass(frozen=True)
class FileReport:
    """How one bootstrap file entered the prompt, in characters and estimated tokens."""

    name: str
    status: FileStatus
    raw_chars: int
    injected_chars: int
    raw_tokens: int
    injected_tokens: int


@dataclass(frozen=True)
class ContextReport:
    """Per-file budget use of the bootstrap files, with totals and the prompt's size.

    Token totals are sums of the per-file estimates.
    """

    files: tuple[FileReport, ...]
    budget: PromptBudget
    prompt_chars: int
    prompt_tokens: int

    @property
    def raw_chars(self) -> int:
        return sum(item.raw_chars for item in self.files)

    @property
    def injected_chars(self) -> int:
        return sum(item.injected_chars for item in self.files)

    @property
    def raw_tokens(self) -> int:
        return sum(item.raw_tokens for item in self.files)

    @property
    def injected_tokens(self) -> int:
        return sum(item.injected_tokens for item in self.files)

    @property
    def truncated(self) -> bool:
        """True when some file was cut or left out for lack of budget."""
        cut = (FileStatus.TRUNCATED, FileStatus.SKIPPED)
        return any(item.status in cut for item in self.files)


def build_context_report(inputs: PromptInputs) -> ContextReport:
    """Report how each bootstrap file of ``inputs`` fits the prompt budget."""
    prompt, planned = _render(inputs)
    files = tuple(
        FileReport(
            name=item.name,
            status=item.status,
            raw_chars=item.raw_chars,
            injected_chars=item.injected_chars,
            raw_tokens=estimate_tokens(item.raw_chars),
            injected_tokens=estimate_tokens(item.injected_chars),
        )
        for item in planned
    )
    return ContextReport(files, inputs.budget, len(prompt), estimate_tokens(len(prompt)))
