"""The disk under memdir: full, or holding something that is not a file where a note goes.

A failed append must leave the note exactly as it was and say the disk is full
(REST: 507 problem JSON, never 500 or "index corrupt"). A FIFO at today's
daily-note path must be refused at once, not read forever under the lock.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from support_reliability import start_server, stop_server

from memdir.bench.disk_full import run_disk_full
from memdir.errors import InvalidInputError
from memdir.memory import Memory


@pytest.mark.slow
def test_a_full_disk_leaves_every_file_as_it_was_and_says_so(tmp_path: Path) -> None:
    report = run_disk_full(tmp_path)
    assert report.bytes_left_by_failed_appends == 0
    assert report.appends_refused == report.appends_tried > 0
    assert report.problems == []
    for name, (status, title, *_detail) in report.rest_answers.items():
        assert (status, title) == (507, "Disk full"), name


def _fifo_at_today(root: Path) -> Path:
    note = root / "memory" / f"{dt.date.today().isoformat()}.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(note)
    return note


@pytest.mark.timeout(60)
def test_a_fifo_at_the_daily_note_path_is_refused(memory: Memory) -> None:
    _fifo_at_today(memory.workspace.root)
    with pytest.raises(InvalidInputError, match="not a regular file"):
        memory.save("The team meets on Tuesdays")
    with pytest.raises(InvalidInputError, match="not a regular file"):
        memory.append_daily("a note")
    assert memory.list_facts() == []
    memory.sync()  # the FIFO is skipped, not read


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_fifo_at_the_daily_note_path_over_rest(tmp_path: Path) -> None:
    server = start_server(tmp_path / "home")
    try:
        _fifo_at_today(server.home / "workspace")
        with server.client() as http:
            http.timeout = 20
            answer = http.post("/api/v1/facts", json={"content": "The team meets on Tuesdays"})
            assert answer.status_code == 422
            assert "not a regular file" in answer.json()["detail"]
            assert http.get("/api/v1/search", params={"query": "team"}).status_code == 200
    finally:
        stop_server(server.process)
