"""A keyword match on one common word of a question does not outrank a strong semantic match,
and a keyword match that holds the question still leads (``hybrid.keyword_strength``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memdir import Memory
from memdir.search import hybrid
from memdir.search.results import SearchOptions

TRAVEL = {
    "memory/2026-04-11.md": (
        "# 2026-04-11\n\n"
        "- Flight to Lisbon on May 4, TAP TP1351, seat 14B\n"
        '- Booked the Alfama guesthouse "Casa do Largo" for May 4-9, confirmation 88213\n'
        "- Passport expires 2027-02-18\n"
    ),
    "memory/2026-04-19.md": (
        "# 2026-04-19\n\n"
        "- Travel insurance is with Allianz, policy TRV-55102\n"
        "- Want to take tram 28 early, before 8am, to avoid the crowds\n"
        "- Jonas prefers window seats; book him 14A, next to me\n"
    ),
    "memory/2026-05-06.md": (
        "# 2026-05-06\n\n"
        "- Sintra day trip moved from Tuesday to Thursday May 7\n"
        "- Bought a Viva Viagem card and topped it up with 10 euros\n"
        "- Return flight May 9, TP1354 at 18:40 from Lisbon\n"
    ),
}


def first_lines(memory: Memory, query: str, options: SearchOptions) -> list[str]:
    """The first line of each hit, in rank order (a hit may take in the lines around it)."""
    results = hybrid.search(
        memory.store, memory.embedder, query, sources=["global"], options=options
    )
    return [hit.text.split("\n")[0] for hit in results.hits]


def first_line(memory: Memory, query: str, options: SearchOptions) -> str:
    return first_lines(memory, query, options)[0]


@pytest.mark.slow
def test_one_shared_common_word_does_not_outrank_the_meaning(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as memory:
        for path, text in TRAVEL.items():
            memory.write_file(path, text)
        memory.sync()
        gated = SearchOptions(max_results=6)
        ungated = replace(gated, keyword_gate=None)
        question = "when does my travel document run out"
        ranked = first_lines(memory, question, gated)
        passport, insurance = "- Passport expires 2027-02-18", "- Travel insurance is with Allianz"
        assert not ranked[0].startswith(insurance)
        assert ranked.index(passport) < next(
            n for n, line in enumerate(ranked) if line.startswith(insurance)
        )
        # without the gate the one shared word ("travel") wins: the test can fail
        assert first_line(memory, question, ungated).startswith(insurance)
        # a question whose words the answer holds keeps its keyword lead
        assert first_line(memory, "Allianz policy number", gated).startswith(insurance)


@pytest.mark.parametrize("gate", [(0.5, 0.5), (0.6, 0.2), (-0.1, 0.3), (0.2, 1.5)])
def test_keyword_gate_must_rise(gate: tuple[float, float]) -> None:
    with pytest.raises(Exception, match="keyword_gate"):
        SearchOptions(keyword_gate=gate)
