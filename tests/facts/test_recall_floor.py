"""Recall scores on search's scale: a calibrated confidence with the same floor, and only
what recall returns counts as an access."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir import Memory

FACTS = [
    "We chose PostgreSQL 16 for the billing service",
    "My cat's name is Whiskerino",
    "The office wifi network is called Hummingbird",
    "We use Kafka for the data pipeline",
]


@pytest.mark.slow
def test_recall_answers_with_a_confidence_and_abstains_on_a_miss(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as memory:
        for text in FACTS:
            memory.save(text)
        missing = memory.recall("quantum chromodynamics lecture notes")
        untouched = [f.access_count for f in memory.list_facts()]
        found = memory.recall("what's my cat's name?")
        facts = {f.text: f for f in memory.list_facts()}
    assert found[0].fact.text == "My cat's name is Whiskerino"
    confidence = found[0].breakdown.confidence
    assert confidence is not None
    assert found[0].score == pytest.approx(confidence)
    assert all(0.0 <= r.score <= 1.0 for r in found)
    assert all(r.score >= memory.settings.search.min_score for r in found)
    assert missing == []
    assert untouched == [0, 0, 0, 0]  # a recall that returned nothing accessed nothing
    returned = {r.fact.text for r in found}
    assert all(facts[t].access_count == (1 if t in returned else 0) for t in FACTS)


def test_recall_without_an_embedder_keeps_relative_scores(tmp_path: Path) -> None:
    with Memory.open(tmp_path, embedder=None) as memory:
        memory.save("We use Kafka for the data pipeline")
        found = memory.recall("Kafka pipeline")
    assert found[0].breakdown.confidence is None
    assert found[0].score > 0.0
