from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.index import SourceFile, sync_files
from memdir.search.query import extract_terms, keyword_query
from memdir.store import KeywordQuery, SqliteStore

NASTY = [
    'he said "hi"',
    "foo*",
    "^start",
    "col:value",
    "NEAR(a b)",
    "(unbalanced",
    "a AND b OR NOT c",
    "東京タワーに行った",
    "🎉🎉 party",
    '""""',
    "x" * 10_000,
    "word " * 2_000,
    "- + { } [ ] ; ' \\",
    "\x00 nul byte",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteStore]:
    root: Path = tmp_path_factory.mktemp("fuzz")
    note = root / "memory" / "2024-01-01.md"
    note.parent.mkdir(parents=True)
    note.write_text("- AND OR NOT near said hi\n", encoding="utf-8")
    db = SqliteStore.open(root / "index.sqlite")
    sync_files(db, None, [SourceFile("global", "memory/2024-01-01.md", note)], sources=["global"])
    yield db
    db.close()


def test_stop_words_dropped_unless_nothing_else() -> None:
    assert extract_terms("what is the deploy day") == ["deploy", "day"]
    assert extract_terms("who is he") == ["who", "is", "he"]


def test_terms_capped_and_deduplicated() -> None:
    terms = extract_terms(" ".join(f"w{i} w{i}" for i in range(100)), max_terms=10)
    assert terms == [f"w{i}" for i in range(10)]


def test_no_words_gives_an_empty_query() -> None:
    assert not keyword_query("🎉 ?!")
    assert not keyword_query("   ")
    assert keyword_query("deploy day") == KeywordQuery(("deploy", "day"))


def test_operators_are_searched_as_words(store: SqliteStore) -> None:
    query = keyword_query("AND OR NOT")
    assert query == KeywordQuery(("and", "or", "not"))
    assert store.keyword_search(query, ["global"], ("block",), 5)["block"]


@pytest.mark.parametrize("text", NASTY)
def test_nasty_inputs_never_break_a_query(store: SqliteStore, text: str) -> None:
    store.keyword_search(keyword_query(text), ["global"], ("block",), 5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_any_text_gives_a_valid_query(store: SqliteStore, text: str) -> None:
    store.keyword_search(keyword_query(text), ["global"], ("chunk",), 3)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(['"', "*", "^", ":", "(", ")", "NEAR", "AND", "a", " "])))
def test_operator_soup_gives_a_valid_query(store: SqliteStore, parts: list[str]) -> None:
    store.keyword_search(keyword_query("".join(parts)), ["global"], ("block",), 3)
    store.keyword_search(KeywordQuery(("".join(parts),)), ["global"], ("block",), 3)
