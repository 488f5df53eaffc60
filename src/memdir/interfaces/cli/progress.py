"""Progress of long commands: a rich bar per stage on a terminal, a line now and then otherwise.

``show_progress(label)`` yields a ``memdir.progress.Progress`` callback. On a
terminal each stage (reading files, embedding, ...) gets its own bar with the
count, the rate and the time left. When stderr is a file or a pipe (a service
log, CI), a line is written when a stage starts, at most every ``interval_s``
seconds while it runs, and when it ends, so a long run still shows it is alive
without flooding the log:

    12:04:31 memdir index sync: embedding 1,280/4,096 units (86.1/s, about 33 s left)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as Bars
from rich.text import Text

from memdir.progress import LINE_INTERVAL_S, Progress, ProgressLines, ProgressUpdate


@contextmanager
def show_progress(
    label: str, console: Console | None = None, interval_s: float = LINE_INTERVAL_S
) -> Iterator[Progress]:
    """A progress callback for the command ``label`` (e.g. ``memdir index sync``)."""
    from memdir.interfaces.cli._app import err_console

    target = console or err_console
    if target.is_terminal:
        with _bars(label, target) as update:
            yield update
        return
    yield ProgressLines(label, target.file, interval_s)


@contextmanager
def _bars(label: str, console: Console) -> Iterator[Progress]:
    columns = (
        TextColumn(f"{label}: {{task.description}}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}"), RateColumn(), TimeRemainingColumn(),
        TimeElapsedColumn(), TextColumn("[dim]{task.fields[detail]}[/dim]"),
    )  # fmt: skip
    with Bars(*columns, console=console, transient=False) as bars:
        tasks: dict[str, TaskID] = {}

        def update(step: ProgressUpdate) -> None:
            detail = step.detail[-40:]
            if step.stage not in tasks:
                tasks[step.stage] = bars.add_task(
                    step.stage, total=step.total, unit=step.unit, detail=detail
                )
            bars.update(tasks[step.stage], completed=step.done, total=step.total, detail=detail)

        yield update


class RateColumn(ProgressColumn):
    """How many of the task's unit per second, e.g. ``86.1/s``."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.1f}/s", style="progress.data.speed")
