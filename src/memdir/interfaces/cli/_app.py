"""Shared plumbing of the CLI: global options, error translation, output helpers."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from memdir.errors import MemdirError

CLI_STEP_NAMES = {
    "list_files": "`memdir files list`",
    "read_file": "`memdir files read PATH`",
    "write_file": "`memdir files write PATH`",
    "recall": "`memdir recall QUESTION` (or `memdir facts list`)",
    "replace_all": "pass --all",
    "list_sessions": "`memdir session list`",
    "reread": "`memdir files read PATH --json` (its sha256 is the new --expected-sha256)",
}
"""How the CLI names each next step an error can point to (``memdir.errors.Action``)."""


def describe_error(error: MemdirError) -> str:
    """The error's message with its next step in CLI terms."""
    return error.describe(CLI_STEP_NAMES)


if TYPE_CHECKING:
    from memdir.config import LoadedSettings

console = Console()
err_console = Console(stderr=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
"""The ``--json`` flag every command that reports something takes."""


class MemdirGroup(TyperGroup):
    """Turns every ``MemdirError`` into one clear line on stderr and exit code 1, and lets
    the global options (``--home``, ``--agent``, ``--set``, ``--verbose``) follow the
    command as well as precede it: ``memdir mcp --agent coder`` is ``memdir --agent coder mcp``.
    """

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except MemdirError as exc:
            sys.stderr.write(f"Error: {describe_error(exc)}\n")
            raise typer.Exit(1) from None

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None and not hasattr(command, "commands"):  # a leaf, not a group
            _accept_global_options(command)
        elif getattr(command, "invoke_without_command", False):  # a group that runs alone
            _accept_global_options(command)  # `memdir import --home H`, `memdir proposals ...`
        return command


def _accept_global_options(command: Any) -> None:
    """Add the global options to a command, hidden, unless it has options of those names."""
    if getattr(command, "_memdir_global_options", False):
        return
    taken = {opt for param in command.params for opt in param.opts}
    for option in _global_options():
        if not taken.intersection(option.opts):
            command.params.append(option)
    command._memdir_global_options = True


def _store_global(field_name: str) -> Callable[[typer.Context, Any], None]:
    """A callback that writes a global option given after the command into ``AppState``."""

    def store(ctx: typer.Context, value: Any) -> None:
        if value is None or value is False or value == [] or value == ():
            return
        app_state = state(ctx)
        if field_name == "overrides":
            app_state.overrides.extend(value)
        elif field_name == "verbose":
            logging.getLogger().setLevel(logging.INFO)
        else:
            setattr(app_state, field_name, value)

    return store


_HIDDEN: dict[str, Any] = {"hidden": True, "expose_value": False}


def _global_options_stand_in(
    home: Annotated[Path | None, typer.Option(callback=_store_global("home"), **_HIDDEN)] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", callback=_store_global("agent"), **_HIDDEN)
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", callback=_store_global("overrides"), **_HIDDEN)
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", callback=_store_global("verbose"), **_HIDDEN)
    ] = False,
) -> None:
    """The global options as a command's parameters; typer builds them from this signature."""


def _global_options() -> list[Any]:
    """Fresh hidden copies of the global options, for one command."""
    stand_in = typer.Typer(add_completion=False)
    stand_in.command()(_global_options_stand_in)
    return list(typer.main.get_command(stand_in).params)


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
        """The ``Memory`` of a command: a run of its own, whose first search syncs first
        (as it would in a process of its own, also when the CLI runs in-process)."""
        from memdir.index import Freshness
        from memdir.memory import Memory

        return Memory.open(
            agent_id=agent or self.agent, settings=self.settings(), freshness=Freshness()
        )


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
