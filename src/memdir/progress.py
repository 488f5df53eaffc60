"""Progress of long work, reported as plain values that each edge displays its own way.

Long operations (index sync and rebuild, benchmarks, workspace transfers,
consolidation) take an optional ``progress`` callback and call it with a
``ProgressUpdate`` whenever a unit of real work is done: a file read, a batch of
texts embedded, a question answered. The core never draws anything; the CLI
shows a bar with rate and time left on a terminal (``interfaces/cli/progress.py``)
and, where output is a log, ``ProgressLines``: a line when a stage starts, every
few seconds while it runs and when it ends.

    def show(update: ProgressUpdate) -> None:
        print(update.stage, update.done, update.total, update.unit)

    memory.sync(progress=show)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

LINE_INTERVAL_S = 10.0
QUIET_S = 1.0  # work that ends sooner leaves no progress line in a log


@dataclass(frozen=True)
class ProgressUpdate:
    """``done`` of ``total`` ``unit``s of ``stage`` (``total`` None: not known yet).

    ``detail`` names the current item (a file path) or says what a stage without
    a count is doing. ``total`` may grow while work is found (units to embed).
    """

    stage: str
    done: int
    total: int | None
    unit: str = "items"
    detail: str = ""

    @property
    def finished(self) -> bool:
        return self.total is not None and self.done >= self.total


Progress = Callable[[ProgressUpdate], None]
"""A callback that receives progress; it must return quickly and never raise."""


@dataclass
class _Stage:
    started: float
    first_done: int
    last_line: float
    shown: bool = False


class ProgressLines:
    """Progress as occasional lines on a stream that is not a terminal.

    Nothing is written during the first ``quiet_s`` seconds, so quick work (a
    consolidation, a small sync) leaves no noise in a script's output; after that,
    a line when a stage starts (or is first seen), every ``interval_s`` seconds
    while it runs, and when it ends.
    """

    def __init__(
        self,
        label: str,
        stream: IO[str] | None = None,
        interval_s: float = LINE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        quiet_s: float = QUIET_S,
    ) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self.clock = clock
        self.quiet_s = quiet_s
        self.started: float | None = None
        self.stages: dict[str, _Stage] = {}

    def __call__(self, update: ProgressUpdate) -> None:
        now = self.clock()
        if self.started is None:
            self.started = now
        stage = self.stages.get(update.stage)
        if stage is None:
            stage = self.stages[update.stage] = _Stage(now, update.done, now, shown=False)
        if now - self.started < self.quiet_s:
            return
        if not stage.shown:
            stage.shown, stage.last_line = True, now
            self._write(update, stage if stage.started < now else None)
        elif update.finished or now - stage.last_line >= self.interval_s:
            stage.last_line = now
            self._write(update, stage)

    def _write(self, update: ProgressUpdate, stage: _Stage | None) -> None:
        words = [f"{time.strftime('%H:%M:%S')} {self.label}: {update.stage}"]
        if update.total is not None:
            words.append(f"{update.done:,}/{update.total:,}")
        elif update.done:
            words.append(f"{update.done:,}")
        if update.unit and len(words) > 1:
            words.append(update.unit)
        line = " ".join(words)
        if stage is not None:
            line += _pace(update, stage, self.clock())
        if update.detail and (stage is None or update.total is None):
            line += f" ({update.detail})"
        self.stream.write(line + "\n")
        self.stream.flush()


def _pace(update: ProgressUpdate, stage: _Stage, now: float) -> str:
    """`` (86.1/s, about 33 s left)`` from the stage's progress since it started."""
    elapsed = now - stage.started
    done = update.done - stage.first_done
    if elapsed <= 0 or done <= 0:
        return ""
    rate = done / elapsed
    if update.total is None or update.finished:
        return f" ({rate:,.1f}/s, {_duration(elapsed)})"
    left = (update.total - update.done) / rate
    return f" ({rate:,.1f}/s, about {_duration(left)} left)"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
