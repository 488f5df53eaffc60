"""The ``memdir`` command line: thin commands over ``Memory``.

Every command parses its arguments, calls one ``Memory`` method and renders
the result. Errors become one line on stderr and exit code 1.

Command modules import only typer, rich and ``memdir.errors`` at module level;
``Memory``, the settings, models, servers and database drivers are imported
inside the commands that use them, so ``memdir --help`` and every
``memdir <command> --help`` stay fast (tests/cli/test_cli_imports.py checks).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from memdir.interfaces.cli import (
    bench,
    chat,
    curate,
    facts,
    file_commands,
    history,
    index,
    server,
    tokens,
    transfer,
    workspace,
)
from memdir.interfaces.cli import config as config_cmds
from memdir.interfaces.cli._app import AppState, make_app
from memdir.version import __version__

app = make_app("Persistent, searchable, self-curating memory for AI agents, kept as Markdown.")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memdir {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    home: Annotated[
        Path | None, typer.Option(help="memdir home (default: $MEMDIR_HOME or ~/.memdir).")
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="Agent id; default: the global workspace.")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a setting: SECTION.KEY=VALUE (repeatable)."),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log progress details.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Persistent, searchable, self-curating memory for AI agents, kept as Markdown."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    ctx.obj = AppState(home=home, agent=agent, overrides=list(set_ or []))


workspace.register(app)
file_commands.register(workspace.files_app)
index.register(app)
server.register(app)
facts.register(app)
curate.register(app)
chat.register(app)
transfer.register(app)
history.register(app)
app.add_typer(config_cmds.app, name="config")
app.add_typer(bench.app, name="bench")
app.add_typer(tokens.app, name="token")


def main() -> None:
    """Entry point of the ``memdir`` script."""
    app()
