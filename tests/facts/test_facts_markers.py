"""The fact lines in daily notes: format, parse, round-trip, malformed markers."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.facts import parse_fact_lines
from memdir.facts.markers import (
    format_fact_line,
    format_forget_line,
    format_reinforce_line,
    format_time,
    new_fact_id,
    parse_time,
)

AT = datetime(2026, 11, 22, 10, 1, 2, tzinfo=UTC)


def test_fact_line_is_readable_and_parses_back() -> None:
    line = format_fact_line("f-ab12cd34ef", "My cat is called Luna", "fact", 5, AT, "f-zz23456789")
    assert line == (
        "- My cat is called Luna <!-- memdir:fact id=f-ab12cd34ef cat=fact imp=5 "
        "at=2026-11-22T10:01:02Z supersedes=f-zz23456789 -->"
    )
    (event,) = parse_fact_lines("memory/2026-11-22.md", "# 2026-11-22\n\n" + line + "\n")
    assert (event.kind, event.line, event.fact_id, event.text) == (
        "fact", 3, "f-ab12cd34ef", "My cat is called Luna",
    )  # fmt: skip
    assert (event.category, event.importance, event.at, event.supersedes) == (
        "fact", 5, AT, "f-zz23456789",
    )  # fmt: skip


def test_forget_and_reinforce_lines_parse_back() -> None:
    text = "\n".join(
        [
            format_forget_line("f-ab12cd34ef", "Tea (reason: old) is fine", "moved (again)", AT),
            format_reinforce_line("f-ab12cd34ef", "Tea is fine", 9, AT),
        ]
    )
    forget, reinforce = parse_fact_lines("memory/x.md", text)
    assert (forget.kind, forget.reason, forget.text) == (
        "forget", "moved (again)", "Tea (reason: old) is fine",
    )  # fmt: skip
    assert (reinforce.kind, reinforce.importance, reinforce.line) == ("reinforce", 9, 2)


_text = (
    st.text(
        st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="\x85"),
        min_size=1,
        max_size=80,
    )
    .map(str.strip)
    .filter(lambda t: t and "<!--" not in t and "-->" not in t)
)


@given(
    text=_text,
    category=st.sampled_from(["fact", "preference", "x-1", "decision"]),
    importance=st.integers(1, 10),
    micros=st.integers(0, 10**15),
    supersedes=st.none() | st.just("f-abcdefghij"),
)
def test_fact_lines_round_trip(
    text: str, category: str, importance: int, micros: int, supersedes: str | None
) -> None:
    at = datetime.fromtimestamp(micros / 1e6, UTC).replace(microsecond=micros % 10**6)
    line = format_fact_line("f-ab12cd34ef", text, category, importance, at, supersedes)
    (event,) = parse_fact_lines("memory/a.md", line)
    assert (event.text, event.category, event.importance, event.at, event.supersedes) == (
        text, category, importance, at, supersedes,
    )  # fmt: skip
    assert (
        format_fact_line(
            event.fact_id, event.text, event.category, event.importance, event.at, event.supersedes
        )
        == line
    )


def test_time_format_round_trips_and_ids_have_the_documented_shape() -> None:
    at = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert format_time(at) == "2026-01-02T03:04:05.000006Z"
    assert parse_time(format_time(at)) == at
    ids = {new_fact_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(len(i) == 12 and i.startswith("f-") for i in ids)


@pytest.mark.parametrize(
    "line",
    [
        "- text <!-- memdir:fact id=bad cat=fact imp=5 at=2026-11-22T10:01:02Z -->",
        "- text <!-- memdir:fact id=f-ab12cd34ef cat=fact imp=11 at=2026-11-22T10:01:02Z -->",
        "- text <!-- memdir:fact id=f-ab12cd34ef cat=fact imp=5 at=yesterday -->",
        "- text <!-- memdir:fact id=f-ab12cd34ef cat=Fact! imp=5 at=2026-11-22T10:01:02Z -->",
        "- <!-- memdir:fact id=f-ab12cd34ef imp=5 at=2026-11-22T10:01:02Z -->",
        "- text <!-- memdir:fact id=f-ab12cd34ef imp=5 -->",
        "- text <!-- memdir:wish id=f-ab12cd34ef at=2026-11-22T10:01:02Z -->",
        "- Forgot: text <!-- memdir:forget id=f-ab12cd34ef at=2026-11-22T10:01:02Z -->",
        "text <!-- memdir:fact id=f-ab12cd34ef at=2026-11-22T10:01:02Z",
    ],
)
def test_malformed_markers_are_skipped_with_a_warning(
    line: str, caplog: pytest.LogCaptureFixture
) -> None:
    good = format_fact_line("f-ab12cd34ef", "kept", "fact", 5, AT)
    with caplog.at_level(logging.WARNING, logger="memdir.facts.markers"):
        events = parse_fact_lines("memory/m.md", f"{line}\n{good}\n")
    assert [e.text for e in events] == ["kept"]
    assert "memory/m.md:1" in caplog.text


def test_prose_mentioning_memdir_is_not_a_marker(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert parse_fact_lines("a.md", "I wrote memdir: a memory tool\n") == []
    assert caplog.text == ""


def test_a_hand_written_fact_line_gets_defaults() -> None:
    (event,) = parse_fact_lines(
        "a.md", "* I like tea  <!-- memdir:fact id=f-ab12cd34ef at=2026-11-22T10:01:02Z -->"
    )
    assert (event.text, event.category, event.importance) == ("I like tea", "fact", 5)
