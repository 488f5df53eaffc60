"""Truncation boundaries: head/tail sizes, per-file and total budgets, the 64-char cut-off."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.errors import InvalidInputError
from memdir.prompt import (
    TRUNCATION_MARKER,
    BootstrapEntry,
    FileStatus,
    PromptBudget,
    plan_injection,
    truncate_text,
)

MARKER_OVERHEAD = len(TRUNCATION_MARKER) + 2  # the marker line and its two newlines


def _text(size: int, seed: int = 0) -> str:
    """Text whose every position is recognisable, so a slice shows where it came from."""
    alphabet = string.ascii_letters + string.digits
    return "".join(alphabet[(seed + i * 7 + i // 61) % len(alphabet)] for i in range(size))


def _files(*sizes: int | None) -> list[BootstrapEntry]:
    return [
        BootstrapEntry(f"F{n}.md", None if size is None else _text(size, n))
        for n, size in enumerate(sizes)
    ]


def test_text_within_budget_is_untouched() -> None:
    text = _text(20_000)
    assert truncate_text(text, 20_000) is text


def test_over_budget_keeps_exactly_70_and_20_percent() -> None:
    text = _text(20_001)
    result = truncate_text(text, 20_000)
    assert result == f"{text[:14_000]}\n{TRUNCATION_MARKER}\n{text[-4_000:]}"
    assert len(result) == 14_000 + 4_000 + MARKER_OVERHEAD


@pytest.mark.parametrize(
    ("budget", "head", "tail"), [(1000, 700, 200), (99, 69, 19), (64, 44, 12), (4, 2, 0)]
)
def test_head_and_tail_sizes_round_down(budget: int, head: int, tail: int) -> None:
    text = _text(budget + 1)
    result = truncate_text(text, budget)
    kept_head, marker, kept_tail = result.split("\n")
    assert (kept_head, marker, kept_tail) == (
        text[:head],
        TRUNCATION_MARKER,
        text[-tail:] * bool(tail),
    )


def test_per_file_budget_applies_to_each_file() -> None:
    planned = plan_injection(_files(25_000, 20_000, 20_001), PromptBudget())
    assert [item.status for item in planned] == [
        FileStatus.TRUNCATED,
        FileStatus.OK,
        FileStatus.TRUNCATED,
    ]
    assert [item.injected_chars for item in planned] == [
        18_000 + MARKER_OVERHEAD,
        20_000,
        18_000 + MARKER_OVERHEAD,
    ]
    assert [item.raw_chars for item in planned] == [25_000, 20_000, 20_001]


def test_total_budget_across_files() -> None:
    # Seven full files use 140,000 chars; the eighth gets the 10,000 left.
    planned = plan_injection(_files(*[20_000] * 7, 20_000, 5_000), PromptBudget())
    assert [item.status for item in planned[:7]] == [FileStatus.OK] * 7
    eighth = planned[7]
    assert eighth.status is FileStatus.TRUNCATED
    assert eighth.text == truncate_text(_text(20_000, 7), 10_000)
    assert eighth.injected_chars == 7_000 + 2_000 + MARKER_OVERHEAD
    # 953 chars of room remain for the ninth file.
    ninth = planned[8]
    assert ninth.status is FileStatus.TRUNCATED
    assert ninth.text == truncate_text(_text(5_000, 8), 953)
    assert sum(item.injected_chars for item in planned) <= 150_000


def test_exact_fit_of_the_total_budget_is_not_truncated() -> None:
    budget = PromptBudget(per_file_chars=100, total_chars=300, min_room_chars=64)
    planned = plan_injection(_files(100, 100, 100, 10), budget)
    assert [item.status for item in planned] == [FileStatus.OK] * 3 + [FileStatus.SKIPPED]
    assert planned[3].text is None
    assert planned[3].injected_chars == 0


def test_file_loads_with_exactly_64_chars_of_room() -> None:
    budget = PromptBudget(per_file_chars=1_000, total_chars=164)
    planned = plan_injection(_files(100, 64), budget)
    assert [item.status for item in planned] == [FileStatus.OK, FileStatus.OK]
    assert planned[1].injected_chars == 64


def test_no_file_loads_with_63_chars_of_room() -> None:
    budget = PromptBudget(per_file_chars=1_000, total_chars=164)
    planned = plan_injection(_files(101, 1, None, 5), budget)
    assert [item.status for item in planned] == [
        FileStatus.OK,
        FileStatus.SKIPPED,
        FileStatus.MISSING,
        FileStatus.SKIPPED,
    ]
    assert [item.raw_chars for item in planned] == [101, 1, 0, 5]


def test_with_64_chars_of_room_a_larger_file_is_truncated_to_that_room() -> None:
    budget = PromptBudget(per_file_chars=1_000, total_chars=164)
    planned = plan_injection(_files(100, 500), budget)
    assert planned[1].status is FileStatus.TRUNCATED
    assert planned[1].text == truncate_text(_text(500, 1), 64)


def test_missing_files_use_no_room() -> None:
    budget = PromptBudget(per_file_chars=100, total_chars=200)
    planned = plan_injection(_files(None, 100, None, 100), budget)
    assert [item.status for item in planned] == [
        FileStatus.MISSING,
        FileStatus.OK,
        FileStatus.MISSING,
        FileStatus.OK,
    ]


def test_trailing_whitespace_does_not_count() -> None:
    budget = PromptBudget(per_file_chars=100, total_chars=1_000)
    content = _text(100) + "\n\n   \n"
    [item] = plan_injection([BootstrapEntry("F.md", content)], budget)
    assert (item.status, item.raw_chars, item.injected_chars) == (FileStatus.OK, 106, 100)


def test_empty_file_is_ok() -> None:
    [item] = plan_injection([BootstrapEntry("MEMORY.md", "")], PromptBudget())
    assert (item.status, item.text) == (FileStatus.OK, "")


@pytest.mark.parametrize(
    "kwargs", [{"per_file_chars": 0}, {"total_chars": -1}, {"min_room_chars": -5}]
)
def test_invalid_budgets_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(InvalidInputError, match="prompt budget"):
        PromptBudget(**kwargs)


@given(
    sizes=st.lists(st.one_of(st.none(), st.integers(0, 3_000)), max_size=8),
    per_file=st.integers(1, 2_000),
    total=st.integers(1, 6_000),
    min_room=st.integers(0, 200),
)
def test_budget_invariants(
    sizes: list[int | None], per_file: int, total: int, min_room: int
) -> None:
    budget = PromptBudget(per_file_chars=per_file, total_chars=total, min_room_chars=min_room)
    planned = plan_injection(_files(*sizes), budget)
    room = total
    for size, item in zip(sizes, planned, strict=True):
        if size is None:
            assert item.status is FileStatus.MISSING
            continue
        if room == 0 or room < min_room:
            assert item.status is FileStatus.SKIPPED
            continue
        limit = min(per_file, room)
        assert item.status is (FileStatus.OK if size <= limit else FileStatus.TRUNCATED)
        assert item.injected_chars <= max(limit, limit * 9 // 10 + MARKER_OVERHEAD)
        if limit >= 470:
            assert item.injected_chars <= limit
        room = max(0, room - item.injected_chars)
    assert sum(item.injected_chars for item in planned) <= total + MARKER_OVERHEAD
