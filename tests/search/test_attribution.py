from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memdir.search import SearchOptions, search
from memdir.search.attribution import apply_attribution, line_label, named_labels
from memdir.search.snippets import Candidate
from memdir.store import SqliteStore, Unit

Index = Callable[..., SqliteStore]
NOW = datetime(2024, 3, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("- Alice: we moved to Lisbon", ("alice",)),
        ("- **user**: which database?", ("user",)),
        ("**Error:** timeout", ("error",)),
        ("1. Bob Smith: yes", ("bob", "smith")),
        ("Caroline: plain paragraph", ("caroline",)),
        ("  * Jon:  indented item", ("jon",)),
        ("- see http://example.com", None),
        ("- at 10:30 we met", None),
        ("- The plan we agreed on last week: ship it", None),  # a clause, not a label
        ("- [fact] Alice: likes tea", None),
        ("- no label here", None),
        ("", None),
    ],
)
def test_line_label(text: str, label: tuple[str, ...] | None) -> None:
    assert line_label(text) == label


def test_named_labels_need_every_word_of_the_label() -> None:
    labels = {("alice",), ("bob", "smith"), ("user",)}
    assert named_labels("What did Alice's sister say?", labels) == {("alice",)}
    assert named_labels("Where does Bob live?", labels) == set()
    assert named_labels("what did bob smith and alice plan", labels) == {
        ("alice",),
        ("bob", "smith"),
    }


def candidate(uid: int, text: str, kind: str = "block", relevance: float = 1.0) -> Candidate:
    unit = Unit("global", "memory/x.md", kind, uid, uid, text, id=uid)  # type: ignore[arg-type]
    return Candidate(unit, relevance)


def test_other_labels_are_demoted_when_the_query_names_one() -> None:
    alice = [candidate(1, "- Alice: I went hiking"), candidate(2, "- Alice: in the Alps")]
    bob = [candidate(3, "- Bob: I went hiking too"), candidate(4, "- Bob: nice")]
    plain = candidate(5, "- went hiking, no label")
    chunk = candidate(6, "- Bob: a chunk is never demoted", kind="chunk")
    apply_attribution("Where did Alice go hiking?", [*alice, *bob, plain, chunk], 0.5)
    assert [c.relevance for c in (*alice, *bob, plain, chunk)] == [1, 1, 0.5, 0.5, 1, 1]
    assert bob[0].breakdown["attribution"] == 0.5
    assert "attribution" not in alice[0].breakdown


@pytest.mark.parametrize(
    ("query", "demote"),
    [
        ("Where did they go hiking?", 0.5),  # names no label
        ("Where did Alice and Bob go?", 0.5),  # names both
        ("Where did Alice go hiking?", 0.0),  # turned off
    ],
)
def test_nothing_changes_otherwise(query: str, demote: float) -> None:
    found = [
        candidate(1, "- Alice: I went hiking"),
        candidate(2, "- Alice: in the Alps"),
        candidate(3, "- Bob: me too"),
        candidate(4, "- Bob: in the Tatras"),
    ]
    apply_attribution(query, found, demote)
    assert [c.relevance for c in found] == [1.0, 1.0, 1.0, 1.0]


def test_one_off_keys_are_content_not_attribution() -> None:
    notes = [
        candidate(1, "- Database: PostgreSQL 16 with a cache in front of reads"),
        candidate(2, "- Cache: Redis 7"),
        candidate(3, "- Alice: the cache was cold"),
        candidate(4, "- Bob: the cache warmed up"),
    ]
    apply_attribution("How is the cache set up?", notes, 0.5)
    assert [c.relevance for c in notes] == [1.0, 1.0, 1.0, 1.0]
    more = [*notes, candidate(5, "- Cache: eviction is LRU")]
    apply_attribution("How is the cache set up?", more, 0.5)
    # "Cache" recurs now and is named, but no other label recurs: nothing to step back
    assert [c.relevance for c in more] == [1.0, 1.0, 1.0, 1.0, 1.0]


FILLER = [
    "- Bob: The weather was grey and wet all week.",
    "- Alice: I finished the quarterly report on Friday.",
    "- Bob: We painted the kitchen a pale yellow.",
    "- Alice: The train to work was late again.",
    "- Bob: I started reading a novel about sailors.",
    "- Alice: My brother visits next month.",
]
CONVERSATION = {
    "memory/2024-03-01.md": "# 2024-03-01\n\n## Session 1\n\n"
    + "\n".join(
        [
            *FILLER,
            "- Bob: My sister adopted a greyhound, a lovely greyhound from the shelter.",
            "- Alice: Ours is a greyhound too, a rescue.",
            "- Bob: Do you walk her every day?",
            "- Alice: Twice, by the river, and on Sundays we go to the coast.",
            "- Bob: A greyhound sleeps most of the day, the shelter said.",
            *FILLER,
        ]
    )
    + "\n"
}
BOB, ALICE, QUESTION, ANSWER = 11, 12, 13, 14  # line numbers


def hits_for(store: SqliteStore, query: str, **options: float) -> list[tuple[int, int]]:
    chosen = SearchOptions(max_results=4, **options)  # type: ignore[arg-type]
    hits = search(store, None, query, sources=["global"], options=chosen, now=NOW)
    return [(h.start_line, h.end_line) for h in hits]


def test_search_ranks_the_named_speaker_first(make_index: Index) -> None:
    store = make_index(CONVERSATION, with_vectors=False)
    query = "Which greyhound does Alice have?"
    narrow = {"answer_share": 0.0, "neighbour_share": 0.0, "absorb_ratio": 1.0}
    before = hits_for(store, query, attribution_demote=0.0, **narrow)
    assert before[:2] == [(BOB, BOB), (ALICE, ALICE)]  # Bob says "greyhound" twice
    assert hits_for(store, query, **narrow)[:2] == [(ALICE, ALICE), (BOB, BOB)]
    options = SearchOptions(max_results=4, **narrow)  # type: ignore[arg-type]
    hits = search(store, None, query, sources=["global"], options=options, now=NOW)
    assert "attribution" not in hits[0].breakdown
    assert hits[1].breakdown["attribution"] == pytest.approx(0.5)


def test_the_answer_after_a_question_is_found_through_it(make_index: Index) -> None:
    store = make_index(CONVERSATION, with_vectors=False)
    query = "do you walk her every day"
    without = hits_for(store, query, answer_share=0.0, neighbour_share=0.0)
    assert not any(start <= ANSWER <= end for start, end in without)
    first = hits_for(store, query, neighbour_share=0.0)[0]
    assert first == (QUESTION, ANSWER)  # the answer rises above its question and joins it
