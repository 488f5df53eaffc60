"""``serve`` starts the file watcher: an edit made on disk reaches the index unasked."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support_interfaces import start_server, stop_server

pytestmark = pytest.mark.slow


def test_a_file_written_on_disk_is_indexed_by_the_watcher(tmp_path: Path) -> None:
    live = start_server(tmp_path / "home")
    try:
        with live.client() as api:
            before = api.get("/api/v1/index/status").json()["files"]
            note = tmp_path / "home" / "workspace" / "memory" / "2024-06-01.md"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text("Written by hand in an editor.\n")
            deadline = time.monotonic() + 15
            files = before
            while time.monotonic() < deadline and files <= before:
                time.sleep(0.2)
                files = api.get("/api/v1/index/status").json()["files"]
        assert files > before
    finally:
        stop_server(live.process)
