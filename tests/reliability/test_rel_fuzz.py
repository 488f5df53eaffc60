"""Hostile input, generated: markdown, search queries, tool arguments and fact texts.

Whatever hypothesis sends, memdir answers with a result or a ``MemdirError``
(``ToolError`` at the tool edge), never another exception, and writes nothing
outside the workspace.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support_reliability import snapshot

from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError, MemdirError
from memdir.memory import Memory
from memdir.text import split_lines
from memdir.tools import TOOLS, ToolError, call_tool

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
MARKDOWN_BITS = [
    "# ", "## ", "### ", "```", "~~~", "| a | b |", "|---|---|", "- ", "* ", "1. ", "> ",
    "---", "<!-- ", " -->", "[x] ", "\n", "\n\n", "\r\n", "\t", "    ", "**", "_", "`",
    "<memory-facts>", "</memory-facts>", "é", "日本語", "🙂", "\u200b", "\ufeff", "\x0b", "\r",
    "\u2028", "\x1c", "\x85",
]  # fmt: skip
FTS_BITS = [
    '"', "'", "*", "^", "(", ")", "NEAR(", "AND", "OR", "NOT", ":", "text:", "-", "+",
    "{", "}", "[", "]", "\\", "%", "_", "\x00", "\n", "  ", "🙂", "日本", "é", "NEAR/3",
]  # fmt: skip


def markdown_text() -> st.SearchStrategy[str]:
    piece = st.one_of(
        st.sampled_from(MARKDOWN_BITS),
        st.text(alphabet=string.ascii_letters + " .,:;!?'\"()", min_size=1, max_size=30),
    )
    return st.lists(piece, max_size=60).map("".join)


def fts_query() -> st.SearchStrategy[str]:
    piece = st.one_of(
        st.sampled_from(FTS_BITS),
        st.text(alphabet=string.ascii_letters, min_size=1, max_size=8),
        st.text(max_size=6),
    )
    return st.lists(piece, min_size=1, max_size=12).map(" ".join)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
HOSTILE_PATHS = st.sampled_from([
    "../x.md", "../../etc/passwd.md", "/etc/passwd.md", "~/x.md", "C:/x.md", "a\\b.md",
    "memory/../../x.md", "x.txt", ".md", "memory/\x00.md", "con.md", "a:b.md", "x.md ",
    "memory//ok.md", "./MEMORY.md", "memory/" + "a" * 300 + ".md", "", " ", "link/x.md",
    ".history/MEMORY.md/x.md", "memory/.hidden.md",
])  # fmt: skip


@pytest.fixture
def fuzz_memory(home: Path) -> Iterator[Memory]:
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        memory.write_file("memory/2024-01-01.md", "# 2024-01-01\n\nWe chose SQLite with FTS5.\n")
        (home / "outside").mkdir()
        (home / "outside" / "x.md").write_text("outside secret\n", encoding="utf-8")
        (memory.workspace.root / "link").symlink_to(home / "outside")
        memory.sync()
        yield memory


@FUZZ
@given(text=markdown_text())
def test_search_citations_quote_the_file(fuzz_memory: Memory, text: str) -> None:
    fuzz_memory.write_file("memory/fuzz.md", text)
    fuzz_memory.sync()
    lines = split_lines(fuzz_memory.read_file("memory/fuzz.md"))
    words = [w for w in text.split() if w.isalnum()][:3] or ["SQLite"]
    for hit in fuzz_memory.search(" ".join(words), max_results=10, min_score=0.0).hits:
        if hit.path != "memory/fuzz.md":
            continue
        assert 1 <= hit.start_line <= hit.end_line <= len(lines)
        cited = "\n".join(
            line.removesuffix("\r") for line in lines[hit.start_line - 1 : hit.end_line]
        )
        if hit.start_line == 1:  # only a byte-order mark that opens the file is not text
            cited = cited.removeprefix("\ufeff")
        assert hit.text == cited, hit.citation


@FUZZ
@given(query=fts_query())
def test_any_query_is_answered_or_refused_clearly(fuzz_memory: Memory, query: str) -> None:
    if not query.strip():
        with pytest.raises(InvalidInputError, match="query"):
            fuzz_memory.search(query, max_results=5)
        return
    assert isinstance(fuzz_memory.search(query, max_results=5).hits, tuple)


def tool_arguments(spec_fields: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    keys = st.sampled_from([*spec_fields, "extra", "__proto__", ""])
    values = st.one_of(JSON, HOSTILE_PATHS, st.integers(min_value=-(2**63), max_value=2**63))
    return st.dictionaries(keys, values, max_size=5)


@FUZZ
@given(data=st.data())
def test_tool_calls_with_garbage_never_escape(fuzz_memory: Memory, data: st.DataObject) -> None:
    home = fuzz_memory.home
    fuzz_memory.history.flush()  # versions are committed off the write path: all in first
    outside_before = {k: v for k, v in snapshot(home).items() if not k.startswith("workspace/")}
    tool = data.draw(st.sampled_from(TOOLS))
    arguments = data.draw(tool_arguments(list(tool.args_model.model_fields)))
    try:
        text = call_tool(fuzz_memory, tool.name, arguments)
    except ToolError as exc:
        text = str(exc)
    assert isinstance(text, str)
    assert "Traceback" not in text
    fuzz_memory.history.flush()
    after = {k: v for k, v in snapshot(home).items() if not k.startswith("workspace/")}
    changed = {k for k in set(after) ^ set(outside_before)} | {
        k for k in after if k in outside_before and after[k] != outside_before[k]
    }
    assert all(k.startswith(("index/", ".git")) for k in changed), changed  # .git: history
    assert (home / "outside" / "x.md").read_text(encoding="utf-8") == "outside secret\n"


@FUZZ
@given(text=st.text(max_size=300))
def test_fact_texts_round_trip_through_the_notes(fuzz_memory: Memory, text: str) -> None:
    try:
        outcome = fuzz_memory.save(text)
    except InvalidInputError:
        return
    except MemdirError as exc:  # pragma: no cover - any other error is a finding
        pytest.fail(f"save({text!r}) raised {type(exc).__name__}: {exc}")
    if outcome.fact is None:
        return
    ids = {f.id: f.text for f in fuzz_memory.list_facts(include_superseded=True)}
    fuzz_memory.facts.rebuild()
    again = {f.id: f.text for f in fuzz_memory.list_facts(include_superseded=True)}
    assert again == ids
    assert outcome.fact.text in again.values()
