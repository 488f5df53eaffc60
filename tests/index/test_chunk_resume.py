"""Cutting a note again after lines were added at its end (``chunking.plan_chunks`` with
the previous plan) gives exactly the plan of cutting the whole text afresh."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.index.chunking import ChunkingOptions, ChunkPlan, chunk_markdown, plan_chunks

FRAGMENTS = [
    "# Title\n", "## Section\n", "### Deeper\n", "A paragraph line about deploys.\n",
    "another line of the same paragraph\n", "\n", "\n\n", "   \n", "- a list item\n",
    "  its continuation\n", "1. numbered\n", "- [ ] a task\n", "```\n", "```python\n",
    "~~~~\n", "code = 1\n", "| a | b |\n", "|---|---|\n", "> quoted\n", "---\n", "***\n",
    "Setext\n", "======\n", "-----\n", "x" * 180 + "\n", "word " * 60 + "\n",
    "a line\r\n", "saved <!-- memdir:fact id=f1 --> fact\n", "---\ntitle: t\n", "...\n",
]  # fmt: skip

OPTIONS = [
    ChunkingOptions(),
    ChunkingOptions(30, 8),
    ChunkingOptions(12, 0),
    ChunkingOptions(20, 19),
]


def _same(resumed: ChunkPlan, fresh: ChunkPlan) -> None:
    assert resumed.spans() == fresh.spans()
    # what the next resume builds on must be right too
    assert resumed.blocks == fresh.blocks
    assert resumed.stacks == fresh.stacks
    assert resumed.atoms == fresh.atoms
    assert resumed.atom_blocks == fresh.atom_blocks
    assert resumed.headings == fresh.headings
    assert resumed.chunks == fresh.chunks


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_note_cut_again_after_appends_equals_a_fresh_cut(data: st.DataObject) -> None:
    pieces = data.draw(st.lists(st.sampled_from(FRAGMENTS), max_size=50))
    text = "".join(pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    options = data.draw(st.sampled_from(OPTIONS))
    plan: ChunkPlan | None = None
    for cut in [*cuts, len(text)]:
        prefix = text[:cut]
        resumed = plan_chunks(prefix, options, plan)
        _same(resumed, plan_chunks(prefix, options))
        plan = resumed


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_plan_of_another_text_is_not_used(data: st.DataObject) -> None:
    before = "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=30)))
    after = "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS), max_size=30)))
    plan = plan_chunks(before, ChunkingOptions(30, 8))
    _same(
        plan_chunks(after, ChunkingOptions(30, 8), plan), plan_chunks(after, ChunkingOptions(30, 8))
    )


def test_an_appended_daily_note_keeps_the_chunks_before_its_tail() -> None:
    note = "# 2026-11-27\n" + "".join(
        f"\n- entry {n} about deploys and billing\n" for n in range(300)
    )
    plan = plan_chunks(note, ChunkingOptions())
    longer = note + "\n- entry 300, the new one\n"
    resumed = plan_chunks(longer, ChunkingOptions(), plan)
    assert resumed.spans() == chunk_markdown(longer)
    assert resumed.kept_chunks >= len(plan.chunk_spans) - 2  # all but the last chunk or two
    assert resumed.kept_blocks == len(plan.block_spans) - 1  # the old last entry is read again


def test_lines_added_can_change_the_blocks_before_them() -> None:
    """A fence left open, a paragraph (setext underline, continuation), an open front
    matter: what is appended changes them, and the resumed cut must see it."""
    cases = [
        ("# N\n\n```\ncode = 1\n\n", "more code\n```\nafter\n"),
        ("# N\n\nA paragraph\n", "======\n"),
        ("# N\n\n- item\n", "  continued\n"),
        ("---\ntitle: t\n\n", "---\n# N\n"),
        ("# N\n\nhalf a li", "ne and the rest\n"),
        ("# N\n\n| a |\n", "| b |\n"),
    ]
    for before, added in cases:
        for options in OPTIONS:
            plan = plan_chunks(before, options)
            _same(plan_chunks(before + added, options, plan), plan_chunks(before + added, options))
