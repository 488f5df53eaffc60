"""Search hits are capped at 500 characters, cut at a line break or between words."""

from __future__ import annotations

from memdir.tools.snippets import SNIPPET_MAX_CHARS, cap_snippet


def test_a_short_hit_is_kept_whole() -> None:
    text = "x" * SNIPPET_MAX_CHARS
    assert cap_snippet(text) == (cap_snippet(text).__class__(text, False, SNIPPET_MAX_CHARS))


def test_a_long_hit_is_cut_at_its_last_line_break_in_the_second_half() -> None:
    text = "a" * 300 + "\n" + "b " * 300
    snippet = cap_snippet(text)
    assert (snippet.text, snippet.cut, snippet.total_chars) == ("a" * 300, True, len(text))


def test_without_a_line_break_it_is_cut_between_words() -> None:
    text = " ".join(f"word{n}" for n in range(200))
    snippet = cap_snippet(text)
    assert snippet.cut
    assert len(snippet.text) <= SNIPPET_MAX_CHARS
    assert text.startswith(snippet.text)
    assert text[len(snippet.text)] == " "


def test_one_long_word_is_cut_hard() -> None:
    snippet = cap_snippet("z" * 2_775)
    assert (len(snippet.text), snippet.total_chars) == (SNIPPET_MAX_CHARS, 2_775)
