"""The no-model heuristics: explicit statements are facts, questions are not; the loss guard."""

from __future__ import annotations

import pytest

from memdir.curate import HeuristicFact, check_loss, heuristic_extract, memory_entries
from memdir.curate.heuristics import summarise_extractively
from memdir.llm import Message


def _facts(text: str) -> list[HeuristicFact]:
    return heuristic_extract([Message("user", text)])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Remember that the office opens at 9.", HeuristicFact("The office opens at 9", "fact", 7)),
        ("please remember: my cat is Luna", HeuristicFact("My cat is Luna", "fact", 7)),
        ("My name is Ada Lovelace.", HeuristicFact("The user's name is Ada Lovelace", "fact", 8)),
        (
            "my favourite editor is Helix",
            HeuristicFact("The user's favourite editor is Helix", "fact", 6),
        ),
        (
            "I prefer short answers.",
            HeuristicFact("The user prefers short answers", "preference", 6),
        ),
        ("We decided to use PostgreSQL.", HeuristicFact("Decided: use PostgreSQL", "decision", 7)),
        (
            "we've agreed on weekly releases",
            HeuristicFact("Decided: weekly releases", "decision", 7),
        ),
        ("I love green tea!", HeuristicFact("The user loves green tea", "preference", 5)),
        ("I really like dark mode", HeuristicFact("The user likes dark mode", "preference", 5)),
        (
            "I hate meetings before 10",
            HeuristicFact("The user dislikes meetings before 10", "preference", 5),
        ),
        ("Call me Sam, thanks.", HeuristicFact("The user wants to be called Sam", "preference", 8)),
    ],
)
def test_explicit_statements_are_facts(text: str, expected: HeuristicFact) -> None:
    assert _facts(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "do you remember my name?",
        "Do you remember my name",
        "What is my name?",
        "Is my name Ada?",
        "my question is whether this works",
        "How do I prefer my coffee?",
        "The weather is nice today.",
        "They decided to leave.",
        "I think so.",
        "please remember it",
        "Remember that!",
        "remember this one.",
    ],
)
def test_non_facts(text: str) -> None:
    assert _facts(text) == []


def test_only_user_messages_count_and_duplicates_are_dropped() -> None:
    messages = [
        Message("assistant", "I prefer to ask first. Remember that I am a bot."),
        Message("user", "I prefer tea. Also, I prefer tea!\nMy dog is Rex."),
    ]
    assert [f.text for f in heuristic_extract(messages)] == [
        "The user prefers tea",
        "The user's dog is Rex",
    ]


def test_extractive_summary_quotes_the_user() -> None:
    messages = [
        Message("user", "Plan the release"),
        Message("assistant", "Sure"),
        Message("user", "Make it Friday"),
    ]
    assert summarise_extractively(messages) == (
        'The user began with "Plan the release" and ended with "Make it Friday"'
    )
    assert summarise_extractively([Message("assistant", "hi")]) == ""


def test_memory_entries_normalise_markers_and_skip_headings() -> None:
    text = (
        "# Title\n\n- **Alice** owns billing.\n* [x] alice owns billing\n"
        "1. Step one\n---\n\nProse line\n"
    )
    assert memory_entries(text) == [
        "alice owns billing",
        "alice owns billing",
        "step one",
        "prose line",
    ]


def test_loss_guard_ratio() -> None:
    old = "- a\n- b\n- c\n- d\n"
    assert check_loss(old, "- a\n- b\n- c\n- e\n").accepted  # 3 of 4
    rejected = check_loss(old, "- a\n- b\n- x\n")
    assert not rejected.accepted
    assert rejected.ratio == 0.5
    assert check_loss("", "- anything\n").accepted
