"""Shared plumbing of the CLI: global options, error translation, output helpers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from memdir.errors import MemdirError

if TYPE_CHECKING:
    from memdir.config import LoadedSettings

console = Console()
err_console = Console(stderr=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
"""The ``--json`` flag every command that reports something takes."""


class MemdirGroup(TyperGroup):
    """Turns every ``MemdirError`` into one clear line on stderr and exit code 1."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except MemdirError as exc:
            sys.stderr.write(f"Error: {exc}\n")
            raise typer.Exit(1) from None


def make_app(help_text: str) -> typer.Typer:
    return typer.Typer(
        cls=MemdirGroup,
        help=help_text,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


@dataclass
class AppState:
    """What the global options say; every command opens memory through it."""

    home: Path | None = None
    agent: str | None = None
    overrides: list[str] = field(default_factory=list)

    def settings(self) -> LoadedSettings:
        from memdir.config import load_settings, parse_overrides

        return load_settings(self.home, parse_overrides(self.overrides))

    def open_memory(self, agent: str | None = None) -> Any:
        from memdir.memory import Memory

        return Memory.open(agent_id=agent or self.agent, settings=self.settings())


def state(ctx: typer.Context) -> AppState:
    obj = ctx.find_root().obj
    if not isinstance(obj, AppState):  # a sub-app invoked on its own, as in some tests
        obj = AppState()
        ctx.find_root().obj = obj
    return obj


def to_jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False) + "\n")


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int, str], None] | None]:
    """A rich progress bar on a terminal; ``None`` (quiet) when stderr is piped."""
    if not err_console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))  # fmt: skip
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("", total=None)

        def update(done: int, total: int, path: str) -> None:
            bar.update(task, completed=done, total=total, description=path[-40:])

        yield update
