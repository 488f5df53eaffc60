"""The context report: per-file status, chars and tokens, with totals."""

from __future__ import annotations

import datetime as dt

from memdir.prompt import (
    TRUNCATION_MARKER,
    BootstrapEntry,
    FileStatus,
    PromptBudget,
    PromptInputs,
    build_context_report,
    build_system_prompt,
)
from memdir.text import tokens_for_chars

NOW = dt.datetime(2025, 1, 31, 9, 0, tzinfo=dt.UTC)


def _inputs(files: list[BootstrapEntry], budget: PromptBudget) -> PromptInputs:
    return PromptInputs(
        base_prompt="Base.",
        bootstrap_files=files,
        now=NOW,
        timezone="UTC",
        budget=budget,
    )


def test_token_estimate_is_ceil_of_a_quarter() -> None:
    assert [tokens_for_chars(n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


def test_report_gives_status_chars_and_tokens_per_file() -> None:
    budget = PromptBudget(per_file_chars=1_000, total_chars=1_500, min_room_chars=64)
    files = [
        BootstrapEntry("AGENTS.md", "a" * 901),
        BootstrapEntry("SOUL.md", "s" * 1_201),
        BootstrapEntry("USER.md", None),
        BootstrapEntry("TOOLS.md", "t" * 10),
    ]
    report = build_context_report(_inputs(files, budget))
    rows = [
        (f.name, f.status, f.raw_chars, f.injected_chars, f.raw_tokens, f.injected_tokens)
        for f in report.files
    ]
    truncated = 599 * 70 // 100 + 599 * 20 // 100 + len(TRUNCATION_MARKER) + 2
    assert rows == [
        ("AGENTS.md", FileStatus.OK, 901, 901, 226, 226),
        ("SOUL.md", FileStatus.TRUNCATED, 1_201, truncated, 301, tokens_for_chars(truncated)),
        ("USER.md", FileStatus.MISSING, 0, 0, 0, 0),
        ("TOOLS.md", FileStatus.SKIPPED, 10, 0, 3, 0),
    ]
    assert report.raw_chars == 901 + 1_201 + 10
    assert report.injected_chars == 901 + truncated
    assert report.raw_tokens == 226 + 301 + 3
    assert report.injected_tokens == 226 + tokens_for_chars(truncated)
    assert report.truncated
    assert report.budget == budget


def test_report_matches_the_prompt_it_describes() -> None:
    inputs = _inputs([BootstrapEntry("AGENTS.md", "rules")], PromptBudget())
    report = build_context_report(inputs)
    prompt = build_system_prompt(inputs)
    assert report.prompt_chars == len(prompt)
    assert report.prompt_tokens == tokens_for_chars(len(prompt))
    assert not report.truncated
    assert [f.status for f in report.files] == [FileStatus.OK]


def test_status_values_are_the_documented_strings() -> None:
    assert [status.value for status in FileStatus] == [
        "OK", "TRUNCATED", "MISSING", "SKIPPED", "DISABLED", "EXCLUDED",
    ]  # fmt: skip
