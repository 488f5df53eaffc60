"""The heuristic fact decider recognises updates without an LLM, and leaves other facts be."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir import Memory
from memdir.bench.updates import ADD, SUPERSEDE, run_updates, save_pair
from memdir.facts.decide import FactCandidate, decide_heuristically, same_frame, shares_subject
from memdir.interfaces.cli import app
from memdir.store.fact_records import Fact

AT = datetime(2026, 11, 1, tzinfo=UTC)


def known(text: str, fact_id: str = "f-aaaaaaaaaa") -> FactCandidate:
    fact = Fact(fact_id, text, "fact", 5, AT, AT, None, None, "memory/2026-11-01.md", 3)
    return FactCandidate(fact, None)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "The release train ships every second Tuesday",
            "The release train now ships every Thursday",
        ),
        ("The backup job runs at 02:00 UTC", "The backup job runs at 03:30 UTC"),
        ("Code reviews need one approval", "Code reviews now need two approvals"),
    ],
)
def test_same_frame_with_a_new_value_supersedes(old: str, new: str) -> None:
    assert same_frame(old, new)
    decision = decide_heuristically(new, [known(old)])
    assert (decision.action, decision.target_id) == ("supersede", "f-aaaaaaaaaa")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The staging server runs Postgres 15", "The production server runs Postgres 15"),
        ("The team uses Slack for chat", "The team uses Jira for tickets"),
        ("We use Jenkins for CI", "We use Sentry for error tracking"),
    ],
)
def test_another_subject_or_more_words_is_no_new_value(old: str, new: str) -> None:
    assert not same_frame(old, new)
    assert decide_heuristically(new, [known(old)]).action == "add"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Alice leads the billing team", "Bob took over the billing team from Alice"),
        ("We store sessions in Redis", "We store sessions in Memcached instead of Redis"),
        ("Tom is on the platform team", "Tom is no longer on the platform team"),
        ("The build server has 8 GB of RAM", "The build server was upgraded to 32 GB of RAM"),
    ],
)
def test_an_update_cue_with_the_same_subject_supersedes(old: str, new: str) -> None:
    assert shares_subject(old, new)
    assert decide_heuristically(new, [known(old)]).action == "supersede"


def test_a_fuller_statement_is_no_new_value_of_the_frame() -> None:
    assert not same_frame("The standup is at 9:30", "The standup is at 9:30 in room 4")


def test_a_statement_that_says_it_adds_never_supersedes() -> None:
    assert same_frame("Carla speaks Portuguese", "Carla speaks Spanish too", cued=True)
    decision = decide_heuristically("Carla speaks Spanish too", [known("Carla speaks Portuguese")])
    assert decision.action == "add"
    also = decide_heuristically("We now also deploy on Mondays", [known("We deploy on Fridays")])
    assert also.action == "add"


def test_an_update_cue_alone_does_not_pick_an_unrelated_fact() -> None:
    decision = decide_heuristically(
        "I am now learning Spanish", [known("I am learning guitar"), known("I live in Lisbon")]
    )
    assert decision.action == "add"


def test_save_retires_the_old_value_so_recall_returns_the_new_one(home: Path) -> None:
    with Memory.open(home, embedder=None, chat_model=None) as memory:
        old = memory.save("The release train ships every second Tuesday", category="decision")
        new = memory.save("The release train now ships every Thursday", category="decision")
        recalled = memory.recall("when does the release train ship?")
    assert new.action == "supersede"
    assert new.superseded is not None
    assert old.fact is not None
    assert new.superseded.id == old.fact.id
    assert [r.fact.text for r in recalled] == ["The release train now ships every Thursday"]


def test_pairs_outcome_counts_a_miss_and_a_hit(home: Path) -> None:
    hit = save_pair(*SUPERSEDE[0], "supersede", None)
    kept = save_pair(*ADD[0], "add", None)
    assert (hit.action, hit.hit_old) == ("supersede", True)
    assert (kept.action, kept.hit_old) == ("add", False)


@pytest.mark.slow
def test_update_pairs_with_the_bundled_model() -> None:
    """Regression floor for `memdir bench updates` (docs/benchmarks.md has the figures)."""
    from memdir.embeddings.local import LocalEmbedder

    result = run_updates(LocalEmbedder())
    assert result["false_supersessions"] == 0, result["false"]
    assert result["update_recall"] >= 0.9, result["missed"]
    assert result["repeats_recognised"] == result["repeats"]


@pytest.mark.slow
def test_cli_prints_the_update_figures() -> None:
    result = CliRunner().invoke(app, ["bench", "updates", "--embedder", "none", "--held-out"])
    assert result.exit_code == 0, result.output
    assert '"update_recall"' in result.stdout
    bad = CliRunner().invoke(app, ["bench", "updates", "--embedder", "openai"])
    assert bad.exit_code == 2
    assert "use local or none" in bad.output
