"""Chunking: example documents and hypothesis properties."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.index.chunking import (
    ChunkingOptions,
    Span,
    chunk_markdown,
    embedding_text,
)
from memdir.text import split_lines, tokens_for_chars


def estimate_tokens(text: str) -> int:
    return tokens_for_chars(len(text))


DOC = """---
title: notes
tags: [a, b]
---
# Project

The project started in March.
It uses SQLite.

- first item
  with a continuation line
- second item
1. numbered item

## Decisions

```python
def choose():

    return "sqlite"
```

| option | verdict |
|--------|---------|
| sqlite | yes     |

> a quoted line
> and another

Setext heading
--------------
A paragraph under the setext heading.
"""


def _chunks(spans: list[Span]) -> list[Span]:
    return [s for s in spans if s.kind == "chunk"]


def _blocks(spans: list[Span]) -> list[Span]:
    return [s for s in spans if s.kind == "block"]


def test_blocks_of_a_document() -> None:
    blocks = {(b.start_line, b.end_line): b for b in _blocks(chunk_markdown(DOC))}
    assert sorted(blocks) == [
        (7, 8),
        (10, 11),
        (12, 12),
        (13, 13),
        (17, 21),
        (23, 25),
        (27, 28),
        (32, 32),
    ]
    assert blocks[(10, 11)].text == "- first item\n  with a continuation line"
    assert blocks[(7, 8)].heading_path == ("Project",)
    assert blocks[(17, 21)].heading_path == ("Project", "Decisions")
    assert blocks[(17, 21)].text.startswith("```python")
    assert blocks[(17, 21)].text.endswith("```")
    assert blocks[(32, 32)].heading_path == ("Project", "Setext heading")


def test_small_document_is_one_chunk_with_front_matter() -> None:
    chunks = _chunks(chunk_markdown(DOC))
    assert len(chunks) == 1
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 32)
    assert chunks[0].text == "\n".join(split_lines(DOC))


def test_sections_start_new_chunks_and_code_stays_whole() -> None:
    body = "\n".join(f"Sentence number {i} about the topic." for i in range(12))
    code = "```\n" + "\n".join(f"x = {i}" for i in range(10)) + "\n```"
    doc = f"# One\n\n{body}\n\n## Two\n\n{code}\n\n{body}\n"
    spans = chunk_markdown(doc, ChunkingOptions(chunk_tokens=150, overlap_tokens=30))
    chunks = _chunks(spans)
    assert any(c.text.startswith("## Two") for c in chunks)
    assert any(code in c.text for c in chunks)
    assert all(c.heading_path[0] == "One" for c in chunks)


def test_empty_and_blank_documents_have_no_units() -> None:
    assert chunk_markdown("") == []
    assert chunk_markdown("\n \n\t\n") == []


def test_heading_alone_is_a_chunk_not_a_block() -> None:
    spans = chunk_markdown("# Only a title\n")
    assert [(s.kind, s.text) for s in spans] == [("chunk", "# Only a title")]


def test_embedding_text_and_token_estimate() -> None:
    assert embedding_text("chunk", ("A", "B"), "body") == "A > B\n\nbody"
    assert embedding_text("chunk", (), "body") == "body"
    assert embedding_text("block", ("A", "B"), "body") == "body"
    assert embedding_text("block", ("A",), "- [x] done\n  2. two") == "done\ntwo"
    assert embedding_text("chunk", ("A",), "* one\n- two") == "A\n\none\ntwo"
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("") == 0


def test_crlf_lines_are_numbered_like_lf() -> None:
    spans = chunk_markdown("# T\r\n\r\npara one\r\npara two\r\n")
    block = _blocks(spans)[0]
    assert (block.start_line, block.end_line, block.text) == (3, 4, "para one\npara two")


# -- properties ------------------------------------------------------------------------------

_LINE = st.one_of(
    st.just(""),
    st.just("```"),
    st.just("---"),
    st.sampled_from(["# Title", "## Section", "### Deep", "Setext", "====="]),
    st.builds(lambda w: f"- {w}", st.text(min_size=0, max_size=40)),
    st.builds(lambda w: f"| {w} |", st.text(max_size=30)),
    st.builds(lambda w: f"> {w}", st.text(max_size=30)),
    st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=120),
    st.text(alphabet="abc ", min_size=200, max_size=900),
)
_OPTIONS = st.builds(
    lambda size, frac: ChunkingOptions(chunk_tokens=size, overlap_tokens=int(size * frac)),
    st.integers(min_value=4, max_value=300),
    st.floats(min_value=0.0, max_value=0.5),
)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_LINE, max_size=60), options=_OPTIONS)
def test_chunking_properties(lines: list[str], options: ChunkingOptions) -> None:
    text = "\n".join(lines)
    doc_lines = split_lines(text)
    spans = chunk_markdown(text, options)
    chunks, blocks = _chunks(spans), _blocks(spans)
    covered: set[int] = set()
    for span in spans:
        # ranges are within the file and text equals the lines of the range (no line split)
        assert 1 <= span.start_line <= span.end_line <= len(doc_lines)
        assert span.text == "\n".join(doc_lines[span.start_line - 1 : span.end_line])
        if span.kind == "chunk":
            covered.update(range(span.start_line, span.end_line + 1))
    # every non-blank line is in some chunk
    for number, line in enumerate(doc_lines, start=1):
        if line.strip():
            assert number in covered, (number, line)
    # chunks are ordered and overlap at most overlap_tokens (+ one line)
    for before, after in itertools.pairwise(chunks):
        assert before.start_line < after.start_line
        assert before.end_line < after.end_line
        if after.start_line <= before.end_line:
            shared = "\n".join(doc_lines[after.start_line - 1 : before.end_line])
            longest = max(
                estimate_tokens(x) for x in doc_lines[after.start_line - 1 : before.end_line]
            )
            assert estimate_tokens(shared) <= options.overlap_tokens + longest
    # every block lies within one chunk, or chunks together cover it
    for block in blocks:
        assert block.text.strip()
        inside = any(
            c.start_line <= block.start_line and block.end_line <= c.end_line for c in chunks
        )
        assert inside or set(range(block.start_line, block.end_line + 1)) <= covered
    # chunk size is bounded unless a single line is longer than the chunk size
    for chunk in chunks:
        if chunk.start_line != chunk.end_line:
            assert estimate_tokens(chunk.text) <= options.chunk_tokens


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(_LINE, max_size=40))
def test_blocks_never_hold_blank_lines_at_their_edges(lines: list[str]) -> None:
    for block in _blocks(chunk_markdown("\n".join(lines))):
        first, *_, last = [*block.text.split("\n"), block.text.split("\n")[-1]]
        assert first.strip()
        assert last.strip()
