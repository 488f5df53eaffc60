"""The notes are the truth: edits and deletions take effect at the next sync."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from memdir.facts import FactBook, parse_fact_lines


def _note(book: FactBook, relpath: str) -> Path:
    return book.workspace.root / relpath


def _rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_editing_the_text_of_a_fact_line_changes_the_fact(book: FactBook) -> None:
    fact = book.save("My cat's name is Whiskerino").fact
    assert fact is not None
    book.recall("cat")  # access statistics survive an edit
    _rewrite(_note(book, fact.source_path), "My cat's name is Whiskerino", "My cat's name is Tom")
    report = book.sync()
    assert (report.changed, report.embedded) == (1, 1)
    edited = book.get(fact.id)
    assert edited.text == "My cat's name is Tom"
    assert edited.access_count == 1
    assert [r.fact.text for r in book.recall("Tom")] == ["My cat's name is Tom"]
    assert all("Whiskerino" not in r.fact.text for r in book.recall("Whiskerino"))
    assert "My cat's name is Tom <!-- memdir:fact" in _note(book, fact.source_path).read_text()


def test_deleting_a_fact_line_removes_the_fact_and_reopens_its_predecessor(
    book: FactBook,
) -> None:
    old = book.save("My cat's name is Whiskerino").fact
    new = book.save("My cat is now called Luna").fact
    assert old is not None
    assert new is not None
    assert book.get(old.id).valid_to is not None
    path = _note(book, new.source_path)
    lines = path.read_text().split("\n")
    del lines[new.source_line - 1]
    path.write_text("\n".join(lines))
    assert book.sync().removed == 1
    assert [f.id for f in book.list_facts(include_superseded=True)] == [old.id]
    assert book.get(old.id).valid_to is None


def test_deleting_a_whole_note_removes_its_facts(book: FactBook) -> None:
    fact = book.save("I prefer tea over coffee").fact
    assert fact is not None
    _note(book, fact.source_path).unlink()
    report = book.sync()
    assert (report.files_removed, report.removed) == (1, 1)
    assert book.list_facts(include_forgotten=True, include_superseded=True) == []


def test_sync_is_cheap_when_nothing_changed(book: FactBook) -> None:
    fact = book.save("I prefer tea over coffee").fact
    assert fact is not None
    first = book.sync()  # the save recorded the note's stamp: nothing to read
    assert (first.files_read, first.added, first.changed, first.removed) == (0, 0, 0, 0)
    path = _note(book, fact.source_path)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10_000))
    touched = book.sync()  # re-hashed, same content: nothing re-derived
    assert (touched.files_read, touched.embedded) == (0, 0)


def test_hand_written_lines_are_picked_up(book: FactBook) -> None:
    path = book.workspace.memory_dir / "2026-02-01.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        "# 2026-02-01\n\n- I like jasmine tea <!-- memdir:fact id=f-hand000001 "
        "at=2026-02-01T08:00:00Z -->\n"
    )
    assert book.sync().added == 1
    fact = book.get("f-hand000001")
    assert (fact.text, fact.category, fact.importance, fact.citation) == (
        "I like jasmine tea", "fact", 5, "memory/2026-02-01.md:3",
    )  # fmt: skip


def test_malformed_markers_never_crash_a_sync(
    book: FactBook, caplog: pytest.LogCaptureFixture
) -> None:
    fact = book.save("I prefer tea over coffee").fact
    assert fact is not None
    path = _note(book, fact.source_path)
    with path.open("a") as handle:
        handle.write(
            "\n- broken <!-- memdir:fact id=f-zzzzzzzzzz imp=99 at=2026-01-01T00:00:00Z -->\n"
            "- Forgot: nothing <!-- memdir:forget id=f-yyyyyyyyyy at=never -->\n"
            "- orphan <!-- memdir:forget id=f-xxxxxxxxxx at=2026-01-01T00:00:00Z -->\n"
            "- Forgot: ghost (reason: r) <!-- memdir:forget id=f-wwwwwwwwww "
            "at=2026-01-01T00:00:00Z -->\n"
            "\x00\xff garbage <!-- memdir:\n"
        )
    with caplog.at_level(logging.WARNING):
        report = book.sync()
    assert report.files_read == 1
    assert [f.text for f in book.list_facts()] == ["I prefer tea over coffee"]
    assert caplog.text.count("malformed fact marker") == 4  # all but the orphan forget


def test_a_duplicated_fact_line_keeps_the_first(
    book: FactBook, caplog: pytest.LogCaptureFixture
) -> None:
    fact = book.save("I prefer tea over coffee").fact
    assert fact is not None
    path = _note(book, fact.source_path)
    line = path.read_text().split("\n")[fact.source_line - 1]
    with path.open("a") as handle:
        handle.write("\n" + line.replace("I prefer tea", "I prefer green tea") + "\n")
    with caplog.at_level(logging.WARNING):
        book.sync()
    assert book.get(fact.id).text == "I prefer tea over coffee"
    assert "second line for fact" in caplog.text
    assert len(parse_fact_lines("x.md", path.read_text())) == 2
