"""Long commands show progress: rich bars on a terminal, occasional lines in a log."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from memdir.interfaces.cli.progress import show_progress
from memdir.progress import ProgressLines, ProgressUpdate


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lines_at_start_every_interval_and_at_the_end() -> None:
    out, clock = io.StringIO(), FakeClock()
    lines = ProgressLines("memdir index sync", out, interval_s=10, clock=clock, quiet_s=0)
    for done in range(0, 401):
        clock.now = done * 0.1  # 10 units a second, 40 s in all
        lines(ProgressUpdate("embedding", done, 400, "units"))
    written = out.getvalue().splitlines()
    assert len(written) == 1 + 4  # the start, at 10, 20, 30 s, and the end at 40 s
    assert written[0].endswith("memdir index sync: embedding 0/400 units")
    assert "embedding 100/400 units (10.0/s, about 30 s left)" in written[1]
    assert "embedding 400/400 units (10.0/s, 40 s)" in written[-1]


def test_each_stage_has_its_own_lines_and_unknown_totals_are_counts() -> None:
    out, clock = io.StringIO(), FakeClock()
    lines = ProgressLines("x", out, interval_s=10, clock=clock, quiet_s=0)
    lines(ProgressUpdate("reading files", 1, 2, "files", "MEMORY.md"))
    lines(ProgressUpdate("reading files", 2, 2, "files", "memory/a.md"))
    lines(ProgressUpdate("vector graphs", 0, None, "", "building the chunk graph"))
    written = out.getvalue().splitlines()
    assert written[0].endswith("x: reading files 1/2 files (MEMORY.md)")
    assert "reading files 2/2 files" in written[1]
    assert written[2].endswith("x: vector graphs (building the chunk graph)")


def test_quick_work_leaves_no_line_and_slow_work_starts_after_the_quiet_time() -> None:
    out, clock = io.StringIO(), FakeClock()
    lines = ProgressLines("x", out, interval_s=10, clock=clock, quiet_s=1.0)
    for done in range(1, 6):
        clock.now = done * 0.1
        lines(ProgressUpdate("reading files", done, 5, "files"))
    assert out.getvalue() == ""  # 0.5 s in all: nothing to say
    clock.now = 2.0
    lines(ProgressUpdate("embedding", 10, 100, "units"))
    clock.now = 3.0
    lines(ProgressUpdate("embedding", 20, 100, "units"))
    written = out.getvalue().splitlines()
    assert len(written) == 1
    assert written[0].endswith("x: embedding 10/100 units")


def test_a_terminal_gets_a_bar_with_rate_and_time_left() -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=160, color_system=None)
    with show_progress("memdir index sync", console=console) as progress:
        for done in range(1, 51):
            progress(ProgressUpdate("embedding", done, 50, "units"))
            time.sleep(0.002)
    shown = screen.getvalue()
    assert "memdir index sync: embedding" in shown
    assert "50/50" in shown
    assert "units" in shown
    assert "/s" in shown  # the rate


def _workspace(home: Path, files: int, bullets: int = 20) -> None:
    memory = home / "workspace" / "memory"
    memory.mkdir(parents=True)
    for day in range(files):
        lines = "".join(
            f"- item {n} of day {day}: the team discussed topic {n * day % 97} with the "
            f"owners of service {n % 13}, agreed on a plan and wrote down who follows up\n"
            for n in range(bullets)
        )
        name = f"2026-{day // 28 + 1:02d}-{day % 28 + 1:02d}.md"
        (memory / name).write_text(f"# Day {day}\n\n{lines}", "utf-8")


@pytest.mark.slow
def test_index_sync_logs_progress_lines_when_piped(home: Path) -> None:
    _workspace(home, 40, bullets=30)  # ~1,300 units of ~30 tokens: seconds for the model
    command = [sys.executable, "-m", "memdir", "--home", str(home), "index", "sync"]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
    log = done.stderr.splitlines()
    embedding = [line for line in log if "memdir index sync: embedding " in line]
    assert embedding, log
    assert re.search(r"embedding (\d[\d,]*)/\1 units", embedding[-1]), embedding  # the end
    assert "40 added" in done.stdout  # the summary stays on stdout


@pytest.mark.slow
def test_index_sync_draws_bars_on_a_terminal(home: Path) -> None:
    _workspace(home, 12)
    reader, writer = pty.openpty()
    command = [sys.executable, "-m", "memdir", "--home", str(home), "--set",
               "embeddings.provider=hash", "index", "sync"]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=writer,
                            env={**os.environ, "COLUMNS": "160"})  # fmt: skip
    os.close(writer)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([reader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(reader, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(reader)
    assert proc.wait(timeout=30) == 0
    screen = seen.decode(errors="replace")
    assert "reading files" in screen
    assert "12/12" in screen
    assert "embedding" in screen
