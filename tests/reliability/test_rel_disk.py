"""The disk under memdir: full, files deleted under a server, a FIFO where a note goes.

A failed append must leave the note exactly as it was and say the disk is full
(REST: 507 problem JSON, never 500 or "index corrupt"). A FIFO at today's
daily-note path must be refused at once, not read forever under the lock.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support_reliability import child_env, start_server, stop_server

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


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "memdir", "--home", str(home),
               "--set", "embeddings.provider=hash", *args]  # fmt: skip
    return subprocess.run(
        command, env=child_env(), capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.slow
@pytest.mark.parametrize("victim", ["memdir.db", "memdir.db-wal", "facts.db"])
def test_index_files_deleted_under_a_running_server(tmp_path: Path, victim: str) -> None:
    server = start_server(tmp_path / "home")
    try:
        with server.client() as http:
            first = http.post("/api/v1/facts", json={"content": "The team meets on Tuesdays"})
            assert first.is_success
            assert http.get("/api/v1/search", params={"query": "team"}).is_success
            (server.home / "index" / victim).unlink()
            searched = _cli(server.home, "search", "team")
            assert searched.returncode == 0, searched.stderr
            assert "Tuesdays" in searched.stdout
            rebuilt = _cli(server.home, "index", "rebuild")
            assert rebuilt.returncode == 0, rebuilt.stderr
            saved = http.post("/api/v1/facts", json={"content": "The office is in Berlin"})
            assert saved.status_code == 201, saved.text
            assert http.post("/api/v1/index/sync").is_success  # a daily-note append: not at once
            hits = http.get("/api/v1/search", params={"query": "office Berlin"}).json()["hits"]
            assert any("Berlin" in hit["text"] for hit in hits)
            recalled = _cli(server.home, "recall", "office")
            assert recalled.returncode == 0, recalled.stderr
            assert "Berlin" in recalled.stdout  # the server wrote to the files others read
    finally:
        stop_server(server.process)


@pytest.mark.slow
def test_read_commands_never_create_a_home(tmp_path: Path) -> None:
    not_home = tmp_path / "etc"
    not_home.mkdir()
    (not_home / "hosts").write_text("127.0.0.1 localhost\n")
    for args in (["search", "x"], ["recall", "x"], ["get", "MEMORY.md"], ["index", "status"],
                 ["prompt"], ["files", "list"]):  # fmt: skip
        done = _cli(not_home, *args)
        assert done.returncode == 1, args
        assert "is not a memdir home" in done.stderr, (args, done.stderr)
        assert "memdir init" in done.stderr
    assert sorted(p.name for p in not_home.iterdir()) == ["hosts"]
    env = {**child_env(), "MEMDIR_HOME": str(tmp_path / "mistyped")}
    mistyped = subprocess.run(
        [sys.executable, "-m", "memdir", "--set", "embeddings.provider=hash", "search", "x"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert mistyped.returncode == 1
    assert "mistyped" in mistyped.stderr
    assert not (tmp_path / "mistyped").exists()
    saved = _cli(tmp_path / "fresh", "save", "The team meets on Tuesdays")  # a write creates it
    assert saved.returncode == 0, saved.stderr
    assert _cli(tmp_path / "fresh", "recall", "team").returncode == 0
