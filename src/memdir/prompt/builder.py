"""Building the system prompt and the context report from ``PromptInputs``.

Both are pure functions of their inputs: the same inputs give the same text.
Section order: base prompt, safety, tools, date and time, runtime, session (group
and shared sessions only), project context, truncation note, memory, recent daily
notes, learnings, high-salience facts (private sessions only), skills.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from memdir.prompt import sections
from memdir.prompt.inputs import BootstrapEntry, BootstrapSource, PromptBudget, PromptInputs
from memdir.prompt.notes import plan_recent_notes
from memdir.prompt.privacy import is_private, redact_for_session, render_session
from memdir.prompt.truncation import FileStatus, InjectedFile, plan_injection
from memdir.text import tokens_for_chars


def _render(inputs: PromptInputs) -> tuple[str, list[InjectedFile], list[InjectedFile]]:
    kind = inputs.session_kind
    planned = plan_injection(inputs.bootstrap_files, inputs.budget, kind)
    recent: Sequence[BootstrapSource] = inputs.recent_notes
    learnings, skills = inputs.learnings, list(inputs.skills)
    removed: dict[str, int] = {}
    if not is_private(kind):  # what each section keeps: privacy.SECTION_PRIVACY
        recent = [_redacted(item, removed) for item in recent]
        learnings = redact_for_session(learnings)[0]
        skills = [line for line in skills if redact_for_session(line)[0].strip()]
    notes = plan_recent_notes(recent, inputs.recent_notes_chars)
    notes = [_noted(item, removed.get(item.name, 0), kind) for item in notes]
    parts = [
        inputs.base_prompt.strip(),
        sections.SAFETY,
        sections.render_tools(inputs.tool_names),
        sections.render_datetime(inputs.now, inputs.timezone),
        sections.render_runtime(inputs.runtime),
        render_session(kind, list(inputs.tool_names)),
        sections.render_project_context(planned, inputs.tool_names),
        sections.render_truncation_note(planned),
        sections.render_memory(inputs.daily_note_count, inputs.memory_dir, inputs.tool_names),
        sections.render_recent_notes(notes),
        sections.render_learnings(learnings),
        sections.render_facts(inputs.facts) if is_private(kind) else "",
        sections.render_skills(skills, inputs.tool_names, inputs.skills_chars),
    ]
    return "\n\n".join(part for part in parts if part) + "\n", planned, notes


def _redacted(item: BootstrapSource, removed: dict[str, int]) -> BootstrapSource:
    """A recent note without its saved-fact lines and private parts (counted in ``removed``)."""
    if item.content is None:
        return item
    text, removed[item.name] = redact_for_session(item.content, drop_saved_facts=True)
    return BootstrapEntry(item.name, text)


def _noted(item: InjectedFile, removed: int, kind: str) -> InjectedFile:
    if not removed:
        return item
    note = f"{removed} private or saved-fact line(s) left out of a {kind} session"
    return dataclasses.replace(item, note=note)


def build_system_prompt(inputs: PromptInputs) -> str:
    """Return the system prompt for ``inputs``."""
    prompt, _, _ = _render(inputs)
    return prompt


@dataclass(frozen=True)
class FileReport:
    """How one file entered the prompt, in characters and estimated tokens.

    ``enabled`` and ``sort_order`` are its prompt.toml settings; ``note`` says what
    the session kind changed.
    """

    name: str
    status: FileStatus
    raw_chars: int
    injected_chars: int
    raw_tokens: int
    injected_tokens: int
    enabled: bool = True
    sort_order: int | None = None
    note: str = ""


@dataclass(frozen=True)
class ContextReport:
    """What the system prompt carries: per-file budget use, with totals and the prompt's size.

    ``files`` are the bootstrap and prompt.toml files (disabled and excluded ones too),
    ``recent_notes`` the daily notes read at session start. Token totals are sums of
    the per-file estimates, over ``files``. ``left_out`` names the sections a group or
    shared session leaves out; ``skills`` and ``tools`` count what the prompt lists.
    """

    files: tuple[FileReport, ...]
    budget: PromptBudget
    prompt_chars: int
    prompt_tokens: int
    session_kind: str = "private"
    workspace: str = ""
    skills: int = 0
    tools: int = 0
    recent_notes: tuple[FileReport, ...] = ()
    left_out: tuple[str, ...] = ()

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


def _file_report(item: InjectedFile) -> FileReport:
    return FileReport(
        name=item.name,
        status=item.status,
        raw_chars=item.raw_chars,
        injected_chars=item.injected_chars,
        raw_tokens=tokens_for_chars(item.raw_chars),
        injected_tokens=tokens_for_chars(item.injected_chars),
        enabled=item.enabled,
        sort_order=item.sort_order,
        note=item.note,
    )


def build_context_report(inputs: PromptInputs) -> ContextReport:
    """Report how each file of ``inputs`` fits the prompt budget, and what else it carries."""
    prompt, planned, notes = _render(inputs)
    left_out: list[str] = []
    if not is_private(inputs.session_kind):
        left_out.extend(item.name for item in planned if item.status is FileStatus.EXCLUDED)
        if inputs.facts:
            left_out.append("high-salience facts")
    return ContextReport(
        files=tuple(_file_report(item) for item in planned),
        budget=inputs.budget,
        prompt_chars=len(prompt),
        prompt_tokens=tokens_for_chars(len(prompt)),
        session_kind=inputs.session_kind,
        workspace=inputs.workspace,
        skills=len(inputs.skills),
        tools=len(inputs.tool_names),
        recent_notes=tuple(_file_report(item) for item in notes),
        left_out=tuple(left_out),
    )
