"""A line-level Markdown scanner: blocks, their kinds and the headings above them.

It is not a full CommonMark parser. It knows what chunking needs: front matter,
fenced code, ATX and one-line setext headings, thematic breaks, tables, block
quotes, list items (with their continuation lines) and paragraphs. Every block
is a range of whole lines; blank lines belong to no block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

BlockKind = Literal[
    "front_matter", "heading", "rule", "code", "table", "quote", "list_item", "paragraph"
]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A heading is one line: a "line" holding a lone '\r' (old Mac line ends) is several lines
# of text to a reader, so it is a paragraph, indexed as text, not a heading's title.
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+([^\r]*?))?(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_TABLE = re.compile(r"^[ \t]*\|")
_QUOTE = re.compile(r"^ {0,3}>")


@dataclass(frozen=True)
class Block:
    """Lines ``start``..``end`` (0-based, inclusive) of one markdown block."""

    kind: BlockKind
    start: int
    end: int
    heading_path: tuple[str, ...]  # headings in effect at ``start`` (a heading includes itself)


def _is_blank(line: str) -> bool:
    return not line.strip()


def _starts_block(line: str) -> bool:
    """True when ``line`` interrupts a paragraph or list item."""
    return bool(
        _FENCE.match(line)
        or _ATX.match(line)
        or _RULE.match(line)
        or _LIST_ITEM.match(line)
        or _TABLE.match(line)
        or _QUOTE.match(line)
    )


def _front_matter_end(lines: list[str]) -> int:
    """Index of the closing ``---`` of front matter at the top, or -1."""
    if not lines or lines[0].strip() != "---":
        return -1
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return index
    return -1


def _fence_end(lines: list[str], start: int) -> int:
    opener = _FENCE.match(lines[start])
    assert opener is not None
    fence = opener.group(1)
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    for index in range(start + 1, len(lines)):
        if closing.match(lines[index]):
            return index
    end = len(lines) - 1  # unclosed: to the end of the file, without trailing blank lines
    while end > start and _is_blank(lines[end]):
        end -= 1
    return end


def _run_end(lines: list[str], start: int, pattern: re.Pattern[str]) -> int:
    end = start
    while end + 1 < len(lines) and pattern.match(lines[end + 1]):
        end += 1
    return end


def _text_end(lines: list[str], start: int) -> int:
    """End of a paragraph or list item: up to a blank line or a line that starts a block."""
    end = start
    while end + 1 < len(lines):
        following = lines[end + 1]
        if _is_blank(following) or _starts_block(following) or _SETEXT.match(following):
            break
        end += 1
    return end


HeadingStack = tuple[tuple[int, str], ...]
"""The headings in effect after a block: (level, title), outermost first."""


class _Headings:
    def __init__(self, stack: HeadingStack = ()) -> None:
        self.stack: list[tuple[int, str]] = list(stack)

    def push(self, level: int, title: str) -> tuple[str, ...]:
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, title))
        return self.path()

    def path(self) -> tuple[str, ...]:
        return tuple(title for _, title in self.stack)


def scan_blocks(lines: list[str]) -> list[Block]:
    """Every block of the document in order, with the heading path at its start."""
    return scan_blocks_from(lines, 0, ())[0]


def scan_blocks_from(
    lines: list[str], index: int, stack: HeadingStack
) -> tuple[list[Block], list[HeadingStack]]:
    """The blocks from line ``index`` on (0: the whole document), the scan resumed with the
    headings ``stack`` in effect there; and the heading stack after each block.

    Resuming at the line after a block gives the blocks a scan of the whole document
    finds there, when that block's end is final (``block_is_final``).
    """
    blocks: list[Block] = []
    stacks: list[HeadingStack] = []
    headings = _Headings(stack)
    front_end = _front_matter_end(lines) if index == 0 else -1
    if front_end >= 0:
        blocks.append(Block("front_matter", 0, front_end, ()))
        stacks.append(())
        index = front_end + 1
    while index < len(lines):
        line = lines[index]
        if _is_blank(line):
            index += 1
            continue
        block = _next_block(lines, index, headings)
        blocks.append(block)
        stacks.append(tuple(headings.stack))
        index = block.end + 1
    return blocks, stacks


def block_is_final(lines: list[str], block: Block, kept: int) -> bool:
    """Whether ``block`` stays as it is whatever follows the first ``kept`` lines (the
    lines that stay): a scan looks one line past a block's end (a blank line, a setext
    underline, a line that starts a block), and a fence left open runs to the end."""
    if block.end + 1 >= kept:
        return False
    if block.kind == "code":
        opener = _FENCE.match(lines[block.start])
        fence = opener.group(1) if opener else "```"
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        return block.end > block.start and bool(closing.match(lines[block.end]))
    return True


def open_front_matter(lines: list[str]) -> bool:
    """Whether the document starts a front matter block it does not close (a line
    added later may close it, and change every block)."""
    return bool(lines) and lines[0].strip() == "---" and _front_matter_end(lines) < 0


def _next_block(lines: list[str], index: int, headings: _Headings) -> Block:
    line = lines[index]
    if _FENCE.match(line):
        return Block("code", index, _fence_end(lines, index), headings.path())
    atx = _ATX.match(line)
    if atx:
        title = (atx.group(2) or "").strip()
        return Block("heading", index, index, headings.push(len(atx.group(1)), title))
    if _RULE.match(line):
        return Block("rule", index, index, headings.path())
    if _TABLE.match(line):
        return Block("table", index, _run_end(lines, index, _TABLE), headings.path())
    if _QUOTE.match(line):
        return Block("quote", index, _run_end(lines, index, _QUOTE), headings.path())
    if _LIST_ITEM.match(line):
        return Block("list_item", index, _text_end(lines, index), headings.path())
    end = _text_end(lines, index)
    underline = lines[end + 1] if end + 1 < len(lines) else ""
    if end == index and _SETEXT.match(underline) and "\r" not in line:
        level = 1 if underline.strip().startswith("=") else 2
        return Block("heading", index, index + 1, headings.push(level, line.strip()))
    return Block("paragraph", index, end, headings.path())
