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
        ("please remember: my cat is Luna", HeuristicFact("The user's cat is Luna", "fact", 7)),
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I'm vegetarian and I'm allergic to nuts.",
            ["The user is vegetarian", "The user is allergic to nuts"],
        ),
        (
            "My name is Alice and I work at ACME.",
            ["The user's name is Alice", "The user works at ACME"],
        ),
        (
            "I live in Berlin but I work in Potsdam.",
            ["The user lives in Berlin", "The user works in Potsdam"],
        ),
        ("I'm a software engineer.", ["The user is a software engineer"]),
        ("I don't eat pork.", ["The user doesn't eat pork"]),
        ("I usually drink tea in the morning.", ["The user usually drinks tea in the morning"]),
        ("I have a cat and I love her.", ["The user has a cat"]),
        (
            "I prefer tea, and my wife prefers coffee.",
            ["The user prefers tea", "The user's wife prefers coffee"],
        ),
        ("Remember that I take the 8:15 train.", ["The user takes the 8:15 train"]),
        (
            "Can you remember that my sister's birthday is May 3?",
            ["The user's sister's birthday is May 3"],
        ),
        ("Please always answer in German.", ["The user asks to always answer in German"]),
        ("Hi, I'm Carla.", ["The user's name is Carla"]),
    ],
)
def test_plain_statements_are_facts_about_the_user(text: str, expected: list[str]) -> None:
    assert [f.text for f in _facts(text)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "I'm tired today.",
        "I'm a bit confused.",
        "I'm going to the shop.",
        "I have a question.",
        "I have to leave in five minutes.",
        "I need help with a bug.",
        "I like that idea.",
        "I love it!",
        "I hate when that happens.",
        "I'm back.",
    ],
)
def test_passing_states_and_reactions_are_not_facts(text: str) -> None:
    assert _facts(text) == []


def test_no_fact_is_stored_half_in_the_first_person() -> None:
    said = [
        "My name is Alice and I work at ACME.",
        "Remember that my manager and I meet on Mondays.",
        "I like the way my team reviews code, and I prefer small pull requests.",
        "My favourite editor is the one I set up myself.",
    ]
    texts = [f.text for f in heuristic_extract([Message("user", " ".join(said))])]
    assert texts
    for text in texts:
        words = set(text.lower().replace(".", " ").split())
        assert not words & {"i", "i'm", "me", "my", "myself"}, text


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
