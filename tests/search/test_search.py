from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError
from memdir.search import SearchOptions, search
from memdir.search.neighbours import Adjacency, adjacency_of, is_adjacent, neighbour_guesses
from memdir.search.results import SearchResults
from memdir.search.snippets import (
    BEFORE_RATIO,
    merge_spans,
    neighbour_relevance,
    score_blocks,
)
from memdir.store import SqliteStore, Unit

Index = Callable[..., SqliteStore]

NOW = datetime(2024, 3, 10, tzinfo=UTC)
OPTIONS = SearchOptions()


def run(
    store: SqliteStore, embedder: HashEmbedder | None, query: str, **kw: object
) -> SearchResults:
    options = SearchOptions(**kw)  # type: ignore[arg-type]
    return search(store, embedder, query, sources=["global"], options=options, now=NOW)


def test_block_hit_is_narrow_with_exact_lines(
    notes_store: SqliteStore, embedder: HashEmbedder
) -> None:
    results = run(notes_store, embedder, "kafka upgrade ingest pipeline")
    top = results[0]
    assert (top.path, top.start_line, top.end_line) == ("memory/2024-01-02.md", 7, 7)
    assert top.text == "- Chen planned the kafka upgrade for the ingest pipeline."
    assert top.citation == "memory/2024-01-02.md:7-7"
    assert top.source == "global"


def test_breakdown_names_every_signal(notes_store: SqliteStore, embedder: HashEmbedder) -> None:
    top = run(notes_store, embedder, "kafka upgrade")[0]
    for key in ("bm25_raw", "bm25", "vector", "fused", "chunk", "recency", "final"):
        assert key in top.breakdown
    assert top.breakdown["final"] == pytest.approx(top.score, abs=1e-6)
    assert 0.0 < top.breakdown["bm25"] < 1.0


def test_keyword_only_without_embedder(make_index: Index, notes: dict[str, str]) -> None:
    store = make_index(notes, with_vectors=False)
    results = run(store, None, "ramen")
    assert results[0].citation == "memory/2024-03-05.md:4-4"
    assert "vector" not in results[0].breakdown
    # the block before it is only a neighbour: a weaker hit of its own, never a wider first hit
    assert [h.citation for h in results[1:]] == ["memory/2024-03-05.md:3-3"]
    assert results[1].breakdown["fused"] == 0.0
    assert results[1].score < results[0].score


def test_default_fusion_keeps_keyword_margins(make_index: Index) -> None:
    filler = "".join(f"- Chore {n}: water the plants and tidy desk {n}.\n" for n in range(12))
    notes = {
        "memory/2024-03-01.md": (
            "# 2024-03-01\n\n"
            "- The kafka upgrade of the ingest pipeline is done.\n\n"
            "Other things happened that day, in a long paragraph about the team offsite, "
            "the lunch menu, the weather and a pipeline of unrelated chores.\n"
        ),
        "memory/2024-03-02.md": "# 2024-03-02\n\n" + filler,
    }
    store = make_index(notes, with_vectors=False)
    options = {"neighbour_share": 0.0, "chunk_share": 0.0, "recency_max_boost": 0.0}
    first, second = run(store, None, "kafka upgrade ingest pipeline", **options)[:2]
    assert first.breakdown["fused"] == pytest.approx(1.0)
    # the weak match keeps its BM25 ratio to the best; rank fusion would give it 11/12
    ratio = second.breakdown["bm25_raw"] / first.breakdown["bm25_raw"]
    assert ratio < 0.5
    assert second.breakdown["fused"] == pytest.approx(ratio, rel=1e-3)
    ranked = run(store, None, "kafka upgrade ingest pipeline", fusion="rrf", **options)
    assert ranked[1].breakdown["fused"] == pytest.approx(11 / 12, abs=1e-5)


def test_no_neighbours_when_share_is_zero(make_index: Index, notes: dict[str, str]) -> None:
    store = make_index(notes, with_vectors=False)
    results = run(store, None, "ramen", neighbour_share=0.0)
    assert [h.citation for h in results] == ["memory/2024-03-05.md:4-4"]


def test_no_line_returned_twice(notes_store: SqliteStore, embedder: HashEmbedder) -> None:
    results = run(notes_store, embedder, "Alice Bruno Chen billing checkout kafka", max_results=10)
    seen: set[tuple[str, int]] = set()
    for hit in results:
        lines = {(hit.path, n) for n in range(hit.start_line, hit.end_line + 1)}
        assert not lines & seen
        seen |= lines
        assert len(hit.text.split("\n")) == hit.end_line - hit.start_line + 1


def test_adjacent_relevant_blocks_merge(make_index: Index, embedder: HashEmbedder) -> None:
    store = make_index(
        {"memory/2024-01-01.md": "- zebra stripes\n- zebra herd\n\nunrelated words\n"}
    )
    results = run(store, embedder, "zebra")
    assert (results[0].start_line, results[0].end_line) == (1, 2)
    # the paragraph after them only comes as a weaker neighbour hit of its own
    assert all(h.breakdown["fused"] == 0.0 for h in results[1:])
    assert results[0].text == "- zebra stripes\n- zebra herd"


def test_empty_index_notice(make_index: Index, embedder: HashEmbedder) -> None:
    store = make_index({})
    results = run(store, embedder, "anything")
    assert len(results) == 0
    assert "no memory files indexed yet" in results.notice
    assert "memdir index sync" in results.notice


def test_no_match_notice_counts_files(notes_store: SqliteStore) -> None:
    results = run(notes_store, None, "xylophone")
    assert list(results) == []
    assert results.notice == "nothing matched 'xylophone' in 3 files"
    assert not results.below_floor


def test_min_score_filters_and_explains(notes_store: SqliteStore, embedder: HashEmbedder) -> None:
    assert run(notes_store, embedder, "tea coffee")
    results = run(notes_store, embedder, "tea coffee", min_score=1.5)
    assert len(results) == 0
    assert results.notice == "nothing scored above min_score 1.5 in 3 files for 'tea coffee'"
    assert results.below_floor


def test_sources_scope(notes_store: SqliteStore, embedder: HashEmbedder) -> None:
    results = search(notes_store, embedder, "tea", sources=["agent:bob"], options=OPTIONS, now=NOW)
    assert len(results) == 0
    assert "no memory files indexed yet" in results.notice


def test_recency_prefers_newer_equal_note(make_index: Index, embedder: HashEmbedder) -> None:
    text = "- the gateway password rotation happened\n"
    store = make_index({"memory/2024-03-09.md": text, "memory/2023-01-01.md": text})
    boosted = run(store, embedder, "gateway rotation")
    assert [h.path for h in boosted] == ["memory/2024-03-09.md", "memory/2023-01-01.md"]
    assert boosted[0].breakdown["recency"] > boosted[1].breakdown["recency"] > 1.0
    assert boosted[0].score <= boosted[0].breakdown["relevance"] * 1.1 + 1e-9
    flat = run(store, embedder, "gateway rotation", recency_max_boost=0.0)
    assert len(flat) == 2
    assert all(h.breakdown["recency"] == 1.0 and h.score == h.breakdown["relevance"] for h in flat)


def test_mmr_lets_a_different_hit_in(make_index: Index, embedder: HashEmbedder) -> None:
    files = {
        "memory/a.md": "- deploy checklist for the api\n",
        "memory/b.md": "- deploy checklist for the api\n",
        "memory/c.md": "- deploy rollback runbook\n",
    }
    store = make_index(files)
    plain = run(store, embedder, "deploy checklist api", max_results=2)
    assert {h.path for h in plain} == {"memory/a.md", "memory/b.md"}
    diverse = run(store, embedder, "deploy checklist api", max_results=2, mmr_lambda=0.3)
    paths = [h.path for h in diverse]
    assert paths[1] == "memory/c.md"
    assert paths[0] in ("memory/a.md", "memory/b.md")


def test_weighted_fusion_scores_in_unit_interval(
    notes_store: SqliteStore, embedder: HashEmbedder
) -> None:
    results = run(notes_store, embedder, "billing postgres", fusion="weighted")
    assert results[0].path == "memory/2024-01-02.md"
    assert all(0.0 <= h.score <= 1.1 for h in results)


def test_hostile_query_is_searched(notes_store: SqliteStore, embedder: HashEmbedder) -> None:
    results = run(notes_store, embedder, 'NEAR("tea" AND ^coffee* OR (')
    assert results[0].path == "MEMORY.md"


def test_empty_query_is_an_error(notes_store: SqliteStore) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        run(notes_store, None, "   ")


@pytest.mark.parametrize(
    "bad",
    [
        {"max_results": 0},
        {"fusion": "sum"},
        {"mmr_lambda": 2.0},
        {"rrf_k": 0},
        {"fusion": "weighted", "vector_weight": 0.0, "text_weight": 0.0},
        {"fusion": "relative", "vector_weight": 0.0, "text_weight": 0.0},
    ],
)
def test_bad_options_are_errors(bad: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError, match=r"search option|fusion needs"):
        SearchOptions(**bad)  # type: ignore[arg-type]


def unit(uid: int, start: int, end: int, kind: str = "block") -> Unit:
    text = "\n".join(f"line {n}" for n in range(start, end + 1))
    return Unit("global", "memory/x.md", kind, start, end, text, id=uid)  # type: ignore[arg-type]


def test_neighbour_relevance_favours_the_blocks_after() -> None:
    units = {i: unit(i, i, i) for i in range(1, 8)}
    adjacency = {3: Adjacency(before=(2, 1), after=(4, 5)), 7: Adjacency()}
    near = neighbour_relevance({3: 0.8, 7: 0.9}, adjacency, units, 0.2)
    assert near == {
        4: pytest.approx(0.16),
        5: pytest.approx(0.16),
        2: pytest.approx(0.16 * BEFORE_RATIO),
        1: pytest.approx(0.16 * BEFORE_RATIO),
    }


def test_the_answer_to_a_question_inherits_its_answer_share() -> None:
    question = Unit(
        "global", "memory/x.md", "block", 1, 1, "- Bo: how long have you had them?", id=1
    )
    statement = Unit("global", "memory/x.md", "block", 3, 3, "- Bo: I like turtles.", id=3)
    units = {1: question, 2: unit(2, 2, 2), 3: statement, 4: unit(4, 4, 4)}
    adjacency = {1: Adjacency(after=(2,)), 3: Adjacency(after=(4,))}
    near = neighbour_relevance({1: 0.5, 3: 0.5}, adjacency, units, 0.2, answer_share=0.8)
    assert near[2] == pytest.approx(0.4)  # the answer: 0.8 of the question
    assert near[4] == pytest.approx(0.1)  # after a statement: the neighbour share only
    assert neighbour_relevance({1: 0.5}, adjacency, units, 0.0, 0.0) == {}


def test_adjacency_needs_same_file_and_close_lines() -> None:
    units = {1: unit(1, 1, 1), 2: unit(2, 2, 3), 3: unit(3, 9, 9), 4: unit(4, 10, 12, "chunk")}
    assert adjacency_of(2, units) == Adjacency(before=(1,), after=())  # 3 is 6 lines away
    assert adjacency_of(3, units) == Adjacency(before=(), after=())  # 4 is a chunk
    other = Unit("global", "memory/y.md", "block", 4, 4, "line 4", id=4)
    assert not is_adjacent(units[2], other)


def test_adjacency_walks_two_blocks_and_stops_at_a_gap() -> None:
    units = {i: unit(i, i, i) for i in range(1, 5)} | {5: unit(5, 9, 9), 6: unit(6, 10, 10)}
    assert adjacency_of(3, units) == Adjacency(before=(2, 1), after=(4,))  # 5 is 5 lines on
    assert adjacency_of(3, units, reach=1) == Adjacency(before=(2,), after=(4,))
    assert adjacency_of(6, units) == Adjacency(before=(5,), after=())


def test_neighbour_only_block_stays_a_separate_hit() -> None:
    units = {1: unit(1, 1, 1), 2: unit(2, 2, 2)}
    scored = score_blocks({1: 1.0}, {}, units, 0.3, {2: 0.1})
    hits = merge_spans(sorted(scored, key=lambda c: -c.relevance), 5)
    assert [(h.start_line, h.end_line) for h in hits] == [(1, 1), (2, 2)]
    assert hits[1].relevance == pytest.approx(0.1)


def test_a_weak_touching_block_is_a_later_hit_not_dropped() -> None:
    units = {1: unit(1, 1, 1), 2: unit(2, 2, 2), 5: unit(5, 9, 9)}
    scored = score_blocks({1: 1.0, 2: 0.2, 5: 0.4}, {}, units, 0.0)
    hits = merge_spans(sorted(scored, key=lambda c: -c.relevance), 5, absorb_ratio=0.5)
    # too weak to widen the first hit, and still a hit of its own (it was dropped before)
    assert [(h.start_line, h.end_line) for h in hits] == [(1, 1), (9, 9), (2, 2)]
    strong = score_blocks({1: 1.0, 2: 0.6}, {}, units, 0.0)
    merged = merge_spans(sorted(strong, key=lambda c: -c.relevance), 5, absorb_ratio=0.5)
    assert [(h.start_line, h.end_line) for h in merged] == [(1, 2)]


def test_blocks_inherit_from_containing_chunk_only() -> None:
    units = {1: unit(1, 2, 2), 2: unit(2, 9, 9), 10: unit(10, 1, 5, "chunk")}
    scored = {c.unit.id: c for c in score_blocks({1: 0.5, 2: 0.5}, {10: 1.0}, units, 0.3)}
    assert scored[1].relevance == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)
    assert scored[2].relevance == pytest.approx(0.7 * 0.5)
    assert 10 not in scored  # covered by block 1, so never returned whole


def test_uncovered_chunk_is_returned_whole() -> None:
    units = {10: unit(10, 1, 5, "chunk")}
    (only,) = score_blocks({}, {10: 0.8}, units, 0.3)
    assert (only.start_line, only.end_line, only.relevance) == (1, 5, 0.8)


def test_neighbour_guesses_cover_the_reach_and_skip_id_zero() -> None:
    assert neighbour_guesses([5]) == {3, 4, 6, 7}
    assert neighbour_guesses([1, 2], reach=1) == {1, 2, 3}
    assert neighbour_guesses([]) == set()
