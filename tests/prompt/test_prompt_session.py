"""Session kinds, private markers, prompt.toml settings and recent notes in the prompt layer."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.errors import InvalidInputError
from memdir.prompt import (
    NOTES_HEAD_MARKER,
    BootstrapEntry,
    FileStatus,
    PromptInputs,
    build_context_report,
    build_system_prompt,
    plan_recent_notes,
    redact_private,
)

NOW = dt.datetime(2025, 1, 31, 9, 0, tzinfo=dt.UTC)
USER = """# USER.md

- **Name:** Ada
- **Salary:** 90k <!-- private -->

## Health (private)

- Allergic to penicillin.
### Doctor
- Dr. Ines Duarte

## Work

- Works on the billing migration.
<!-- private -->
- Home address: 12 Harbour Road
<!-- /private -->
- Likes short answers.
"""
FILES = [
    BootstrapEntry("AGENTS.md", "Agents guidance."),
    BootstrapEntry("USER.md", USER),
    BootstrapEntry("MEMORY.md", "- The user's PIN hint is the cat's birthday."),
]


def inputs(kind: str = "private", **extra: object) -> PromptInputs:
    values: dict[str, object] = {
        "base_prompt": "Base.", "bootstrap_files": FILES, "now": NOW, "timezone": "UTC",
        "facts": ("The user's salary is 90k",), "session_kind": kind,
    }  # fmt: skip
    values.update(extra)
    return PromptInputs(**values)  # type: ignore[arg-type]


def test_private_markers_are_removed() -> None:
    text, removed = redact_private(USER)
    assert "Salary" not in text
    assert "penicillin" not in text
    assert "Duarte" not in text  # a sub-heading of a private section is private too
    assert "Harbour Road" not in text
    assert "<!-- private -->" not in text
    assert "Works on the billing migration." in text
    assert "Likes short answers." in text
    assert "## Work" in text
    assert removed == 10  # 1 marked line, a 6-line section, a 3-line block


def test_an_unclosed_private_block_runs_to_the_end() -> None:
    text, removed = redact_private("- public\n<!-- private -->\n- secret one\n- secret two\n")
    assert text.strip() == "- public"
    assert removed == 4  # the marker, two lines and the final empty line


@given(st.text(alphabet=st.characters(blacklist_characters="<>#"), max_size=200))
def test_text_without_markers_is_unchanged(text: str) -> None:
    assert redact_private(text) == (text, 0)


def test_a_group_session_leaves_private_memory_out() -> None:
    private = build_system_prompt(inputs("private"))
    group = build_system_prompt(inputs("group"))
    assert "PIN hint" in private
    assert "salary is 90k" in private
    assert "# Session" not in private
    assert "PIN hint" not in group
    assert "salary is 90k" not in group
    assert "penicillin" not in group
    assert "Likes short answers." in group
    assert "# Session: group" in group
    report = build_context_report(inputs("shared"))
    statuses = {f.name: (f.status, f.note) for f in report.files}
    assert statuses["MEMORY.md"][0] is FileStatus.EXCLUDED
    assert statuses["USER.md"][0] is FileStatus.OK
    assert statuses["USER.md"][1] == "10 private line(s) left out of a shared session"
    assert report.left_out == ("MEMORY.md", "high-salience facts")
    assert report.session_kind == "shared"


def test_an_unknown_session_kind_is_refused() -> None:
    with pytest.raises(InvalidInputError, match=r"private .* group .* shared"):
        inputs("public")


def test_disabled_files_are_reported_not_injected() -> None:
    files = [
        BootstrapEntry("AGENTS.md", "Agents guidance.", sort_order=10),
        BootstrapEntry("MEMORY.md", "- remembered", enabled=False, sort_order=60),
    ]
    report = build_context_report(inputs(bootstrap_files=files))
    rows = [(f.name, f.status, f.enabled, f.sort_order, f.injected_chars) for f in report.files]
    assert rows == [
        ("AGENTS.md", FileStatus.OK, True, 10, 16),
        ("MEMORY.md", FileStatus.DISABLED, False, 60, 0),
    ]
    assert "remembered" not in build_system_prompt(inputs(bootstrap_files=files))


def test_recent_notes_keep_their_tail_within_the_budget() -> None:
    today = "# 2025-01-31\n\n" + "".join(f"- entry {n} of today\n" for n in range(40))
    yesterday = "# 2025-01-30\n\n- yesterday's only entry <!-- memdir:fact id=f-aaaaaaaaaa -->\n"
    notes = [BootstrapEntry("memory/2025-01-31.md", today),
             BootstrapEntry("memory/2025-01-30.md", yesterday),
             BootstrapEntry("memory/2025-01-29.md", None)]  # fmt: skip
    planned = plan_recent_notes(notes, 400)
    assert [(p.name, p.status) for p in planned] == [
        ("memory/2025-01-31.md", FileStatus.TRUNCATED),
        ("memory/2025-01-30.md", FileStatus.SKIPPED),
    ]
    assert planned[0].text is not None
    assert planned[0].text.startswith(NOTES_HEAD_MARKER + "\n- entry")
    assert planned[0].text.endswith("- entry 39 of today")
    assert len(planned[0].text) <= 400
    roomy = plan_recent_notes(notes, 4_000)
    assert [p.status for p in roomy] == [FileStatus.OK, FileStatus.OK]
    assert roomy[1].text == "# 2025-01-30\n\n- yesterday's only entry"  # markers dropped
    prompt = build_system_prompt(inputs(recent_notes=notes, recent_notes_chars=4_000))
    assert prompt.index("## memory/2025-01-31.md") < prompt.index("## memory/2025-01-30.md")
    assert "<memory-notes>" in prompt


def test_the_ritual_line_names_the_finishing_tool() -> None:
    files = [BootstrapEntry("BOOTSTRAP.md", "# BOOTSTRAP.md\nMeet your human."), *FILES]
    with_tool = build_system_prompt(
        inputs(bootstrap_files=files, tool_names=("memory_finish_ritual",))
    )
    assert "call memory_finish_ritual" in with_tool
    without = build_system_prompt(inputs(bootstrap_files=files))
    assert "memdir ritual finish" in without
    assert "first conversation" not in build_system_prompt(inputs())


def test_skills_are_listed_and_counted() -> None:
    lines = ("release-notes: Write release notes (skills/release-notes/SKILL.md)",)
    prompt = build_system_prompt(inputs(skills=lines, tool_names=("memory_read_file",)))
    skills = prompt.split("# Skills", 1)[1]
    assert "read its SKILL.md (memory_read_file)" in skills
    assert "- release-notes: Write release notes" in skills
    report = build_context_report(inputs(skills=lines, tool_names=("a", "b"), workspace="/w"))
    assert (report.skills, report.tools, report.workspace) == (1, 2, "/w")
