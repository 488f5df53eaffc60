"""The markdown watcher: a real watchfiles thread on tmp folders."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memdir.errors import NotFoundError
from memdir.index import Watcher


def _wait_for(predicate: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_watcher_sees_markdown_and_survives_handler_errors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = tmp_path / "global", tmp_path / "agent"
    first.mkdir()
    second.mkdir()
    seen: list[set[Path]] = []
    lock = threading.Lock()

    def on_change(paths: set[Path]) -> None:
        with lock:
            seen.append(paths)
        if any(p.name == "boom.md" for p in paths):
            raise RuntimeError("handler failure")

    watcher = Watcher([first, second], on_change, debounce_ms=100)
    watcher.start()
    watcher.start()  # idempotent
    try:
        time.sleep(0.3)
        (first / "boom.md").write_text("# boom\n")
        assert _wait_for(lambda: any(first / "boom.md" in s for s in seen))
        (second / "ignored.txt").write_text("not markdown")
        (second / "note.md").write_text("# note\n")
        assert _wait_for(lambda: any(second / "note.md" in s for s in seen))
        assert all(p.suffix == ".md" for s in seen for p in s)
        assert watcher.running
        assert "handler failed" in caplog.text
    finally:
        watcher.stop()
    watcher.stop()  # idempotent
    assert not watcher.running


def test_watcher_refuses_missing_folder(tmp_path: Path) -> None:
    watcher = Watcher([tmp_path / "missing"], lambda paths: None)
    with pytest.raises(NotFoundError, match="missing"):
        watcher.start()
    watcher.stop()
