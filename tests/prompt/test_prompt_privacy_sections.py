"""Privacy by session kind over every section of the system prompt.

Each section is built with something private in it (a saved-fact line in a recent daily
note, a part marked private in a note, a learning, a skill, USER.md, MEMORY.md, the
high-salience facts) for every session kind: a private session sees all of it, a group or
shared one none. The prompt's sections are exactly those ``SECTION_PRIVACY`` lists.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
from memdir.prompt import (
    BootstrapEntry,
    PromptBudget,
    PromptInputs,
    build_context_report,
    build_system_prompt,
)
from memdir.prompt.privacy import SECTION_PRIVACY, SESSION_KINDS

NOW = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
NOTE = (
    "- met Bo about the launch\n"
    "- The user's salary is 90k <!-- memdir:fact id=f-aaaaaaaaaa cat=fact imp=5 "
    "at=2026-03-02T08:00:00Z -->\n"
    "- Reinforced: The safe code hint is the dog <!-- memdir:reinforce id=f-bbbbbbbbbb "
    "imp=8 at=2026-03-02T08:01:00Z -->\n"
    "- Forgot: Old flat on Elm Street (reason: moved) <!-- memdir:forget id=f-cccccccccc "
    "at=2026-03-02T08:02:00Z -->\n"
    "- therapy on Fridays <!-- private -->\n"
    "- lunch with Cy\n"
)
# private words per section; each must reach a private prompt and no other
PRIVATE = {
    "Recent daily notes": ["salary is 90k", "safe code hint", "Elm Street", "therapy on Fridays"],
    "Project context": ["PIN hint", "Home address"],
    "Learnings": ["divorce lawyer"],
    "High-salience facts": ["blood type is O"],
    "Skills": ["diary-keeper"],
}
SHARED = {  # what every kind keeps
    "Recent daily notes": ["met Bo about the launch", "lunch with Cy"],
    "Project context": ["Likes short answers"],
    "Learnings": ["retry the upload twice"],
    "Skills": ["deploy: ship a release"],
}


def inputs(kind: str) -> PromptInputs:
    files = [
        BootstrapEntry("AGENTS.md", "Agents guidance."),
        BootstrapEntry(
            "USER.md", "- Likes short answers.\n- Home address: 1 Quay <!-- private -->"
        ),
        BootstrapEntry("MEMORY.md", "- The user's PIN hint is the cat's birthday."),
        BootstrapEntry("TOOLS.md", "- a tool note that is far too long " * 20),  # truncated
    ]
    return PromptInputs(
        base_prompt="Base.", bootstrap_files=files, now=NOW, timezone="UTC",
        runtime={"agent": "global"}, tool_names=("memory_search",), daily_note_count=1,
        learnings="- retry the upload twice\n- ask about the divorce lawyer <!-- private -->",
        facts=("The user's blood type is O",),
        skills=("deploy: ship a release (skills/deploy/SKILL.md)",
                "diary-keeper: my diary <!-- private --> (skills/diary/SKILL.md)"),
        budget=PromptBudget(per_file_chars=200, total_chars=10_000),
        session_kind=kind, recent_notes=[BootstrapEntry("memory/2026-03-02.md", NOTE)],
    )  # fmt: skip


def _sections(prompt: str) -> dict[str, str]:
    """The prompt cut at its ``# `` headings (the text before the first is the base)."""
    found: dict[str, str] = {}
    parts = re.split(r"(?m)^# (.+)$", prompt)
    found[""] = parts[0]
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        found[heading.split(":")[0]] = body
    return found


@pytest.mark.parametrize("kind", SESSION_KINDS)
def test_every_section_against_every_session_kind(kind: str) -> None:
    prompt = build_system_prompt(inputs(kind))
    sections = _sections(prompt)
    expected = set(SECTION_PRIVACY) - ({"Session"} if kind == "private" else set())
    expected -= {"High-salience facts"} if kind != "private" else set()
    assert set(sections) == expected  # a new section must say what each kind sees of it
    for section, words in PRIVATE.items():
        body = sections.get(section, "")
        for word in words:
            if kind == "private":
                assert word in body, (section, word)
            else:
                assert word not in prompt, (kind, section, word)
    for section, words in SHARED.items():
        for word in words:
            assert word in sections[section], (kind, section, word)


def test_the_report_says_saved_fact_lines_were_left_out() -> None:
    report = build_context_report(inputs("group"))
    (note,) = report.recent_notes
    assert note.note == "4 private or saved-fact line(s) left out of a group session"


@pytest.mark.parametrize("kind", ["group", "shared"])
def test_a_saved_fact_never_reaches_a_group_or_shared_prompt(tmp_path: Path, kind: str) -> None:
    with Memory.open(tmp_path / "home", embedder=HashEmbedder()) as memory:
        memory.init()
        memory.save("My bank is Northwind Credit Union", importance=9)
        memory.append_daily("met Bo about the launch")
        assert "Northwind" in memory.system_prompt(session_kind="private")
        prompt = memory.system_prompt(session_kind=kind)
    assert "Northwind" not in prompt
    assert "met Bo about the launch" in prompt
