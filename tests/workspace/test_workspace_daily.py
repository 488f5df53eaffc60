"""Daily notes: format, exact line numbers, and no lost or torn lines under concurrency."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memdir.errors import InvalidInputError
from memdir.workspace import Workspace
from memdir.workspace.daily import journal_of, repair_interrupted_appends

DAY = dt.date(2025, 1, 31)
NOTE = "memory/2025-01-31.md"


def _lines(workspace: Workspace) -> list[str]:
    return (workspace.root / NOTE).read_text(encoding="utf-8").split("\n")


def test_first_append_creates_the_note_with_a_heading(global_ws: Workspace) -> None:
    location = global_ws.append_daily("Decided to use SQLite.", DAY)
    assert (location.path, location.start_line, location.end_line) == (NOTE, 3, 3)
    assert location.cite() == f"{NOTE}:3-3"
    assert (global_ws.root / NOTE).read_text(encoding="utf-8") == (
        "# 2025-01-31\n\nDecided to use SQLite.\n"
    )


def test_appends_are_separated_and_located_exactly(global_ws: Workspace) -> None:
    first = global_ws.append_daily("one", DAY)
    second = global_ws.append_daily("two\nthree\n\nfour", DAY)
    third = global_ws.append_daily("five", DAY)
    lines = _lines(global_ws)
    assert (first.start_line, first.end_line) == (3, 3)
    assert (second.start_line, second.end_line) == (5, 8)
    assert lines[second.start_line - 1 : second.end_line] == ["two", "three", "", "four"]
    assert lines[third.start_line - 1] == "five"


def test_append_after_a_hand_edit_without_final_newline(global_ws: Workspace) -> None:
    (global_ws.root / NOTE).write_text("# 2025-01-31\n\nhand written", encoding="utf-8")
    location = global_ws.append_daily("appended", DAY)
    assert _lines(global_ws) == ["# 2025-01-31", "", "hand written", "", "appended", ""]
    assert (location.start_line, location.end_line) == (5, 5)


def test_append_normalises_line_endings(global_ws: Workspace) -> None:
    location = global_ws.append_daily("a\r\nb\rc\r\n", DAY)
    assert _lines(global_ws)[2:5] == ["a", "b", "c"]
    assert (location.start_line, location.end_line) == (3, 5)


@pytest.mark.parametrize("text", ["", "\n\n", "   "])
def test_empty_text_is_refused_and_nothing_is_created(global_ws: Workspace, text: str) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        global_ws.append_daily(text, DAY)
    assert not (global_ws.root / NOTE).exists()


def test_default_date_is_today(global_ws: Workspace) -> None:
    location = global_ws.append_daily("today")
    assert location.path == f"memory/{dt.date.today().isoformat()}.md"


def test_append_creates_the_memory_folder(home: Path) -> None:
    workspace = Workspace(home, "fresh")
    assert workspace.append_daily("first", DAY).start_line == 3
    assert (workspace.root / NOTE).is_file()


def _entry(worker: int, index: int) -> str:
    return f"w{worker:02d}-{index:04d}-" + "abcdefghij" * 6 + f"-end{worker:02d}{index:04d}"


def _check_note(workspace: Workspace, results: list[tuple[str, int, int]]) -> None:
    lines = _lines(workspace)
    body = [line for line in lines[1:] if line]
    expected = [text for text, _, _ in results]
    assert sorted(body) == sorted(expected)  # every line once, whole, nothing else
    assert len(set(expected)) == len(expected)
    for text, start, end in results:
        assert start == end
        assert lines[start - 1] == text


def test_threads_appending_at_once_lose_nothing(global_ws: Workspace) -> None:
    results: list[tuple[str, int, int]] = []
    barrier = threading.Barrier(8)

    def append_many(worker: int) -> None:
        barrier.wait()
        for index in range(150):
            text = _entry(worker, index)
            location = global_ws.append_daily(text, DAY)
            results.append((text, location.start_line, location.end_line))

    threads = [threading.Thread(target=append_many, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8 * 150
    _check_note(global_ws, results)


def test_appends_survive_concurrent_atomic_rewrites(global_ws: Workspace) -> None:
    """A rewrite replaces the file; appenders waiting on the old file must follow it."""
    global_ws.append_daily("start", DAY)
    results: list[tuple[str, int, int]] = []
    done = threading.Event()

    def append_many(worker: int) -> None:
        for index in range(100):
            text = _entry(worker, index)
            location = global_ws.append_daily(text, DAY)
            results.append((text, location.start_line, location.end_line))

    def rewrite_repeatedly() -> None:
        while not done.is_set():
            global_ws.edit_file(NOTE, "# 2025-01-31", "# 2025-01-31")

    rewriter = threading.Thread(target=rewrite_repeatedly)
    appenders = [threading.Thread(target=append_many, args=(n,)) for n in range(4)]
    rewriter.start()
    for thread in appenders:
        thread.start()
    for thread in appenders:
        thread.join()
    done.set()
    rewriter.join()
    body = [line for line in _lines(global_ws)[1:] if line]
    assert sorted(body) == sorted(["start", *(text for text, _, _ in results)])


_WORKER = """
import datetime as dt, json, sys, time
from pathlib import Path
from memdir.workspace import Workspace

home, worker, count, go = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
workspace = Workspace(home)
while not go.exists():
    time.sleep(0.002)
out = []
for index in range(count):
    text = f"w{worker:02d}-{index:04d}-" + "abcdefghij" * 6 + f"-end{worker:02d}{index:04d}"
    location = workspace.append_daily(text, dt.date(2025, 1, 31))
    out.append([text, location.start_line, location.end_line])
print(json.dumps(out))
"""


@pytest.mark.slow
def test_processes_appending_at_once_lose_nothing(global_ws: Workspace, tmp_path: Path) -> None:
    workers, count = 8, 500
    go = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(global_ws.home), str(n), str(count), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(workers)
    ]
    go.touch()
    results: list[tuple[str, int, int]] = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        results.extend((text, start, end) for text, start, end in json.loads(out))
    assert len(results) == workers * count
    _check_note(global_ws, results)


def _torn(root: Path, day: dt.date) -> tuple[Path, int]:
    """A note whose last append was cut by a kill: its journal and a partial entry."""
    note = root / "memory" / f"{day.isoformat()}.md"
    whole = note.read_bytes()
    entry = b"\n- an entry that a killed writer never finished writing\n"
    note.write_bytes(whole + entry[:20])
    journal_of(note).write_text(f"{len(whole)} {len(whole) + len(entry)}", encoding="ascii")
    return note, len(whole)


def test_an_append_cut_by_a_kill_is_cut_off_by_the_next_append(global_ws: Workspace) -> None:
    day = dt.date(2026, 11, 20)
    global_ws.append_daily("first entry", date=day)
    note, whole = _torn(global_ws.root, day)
    where = global_ws.append_daily("second entry", date=day)
    text = note.read_text(encoding="utf-8")
    assert "never finished" not in text
    assert "an entry that" not in text
    assert text.endswith("first entry\n\nsecond entry\n")
    assert text.splitlines()[where.start_line - 1] == "second entry"
    assert not journal_of(note).exists()
    assert note.stat().st_size > whole


def test_a_sync_repairs_an_interrupted_append_and_keeps_a_finished_one(home: Path) -> None:
    ws = Workspace(home)
    day = dt.date(2026, 11, 21)
    ws.append_daily("kept entry", date=day)
    note, whole = _torn(ws.root, day)
    assert repair_interrupted_appends(ws.root) == 1
    assert note.stat().st_size == whole
    assert not journal_of(note).exists()
    # a writer killed after its write but before removing the journal: its entry stays
    ws.append_daily("finished entry", date=day)
    size = note.stat().st_size
    journal_of(note).write_text(f"{whole} {size}", encoding="ascii")
    repair_interrupted_appends(ws.root)
    assert note.stat().st_size == size
    assert "finished entry" in note.read_text(encoding="utf-8")
    assert not journal_of(note).exists()
    # a journal whose note is gone is only removed
    journal_of(note).write_text("1 2", encoding="ascii")
    note.unlink()
    repair_interrupted_appends(ws.root)
    assert not journal_of(note).exists()
    assert not note.exists()
