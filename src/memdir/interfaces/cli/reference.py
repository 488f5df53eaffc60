"""docs/cli.md, generated from the help of every command.

Run ``python -m memdir.interfaces.cli.reference > docs/cli.md`` after changing a command.
A test regenerates it and compares, so the page cannot drift from the code, and
fails when a command has no help text.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import typer

HEADER = """# Command line reference

Generated from `memdir --help` and each command's help by
`python -m memdir.interfaces.cli.reference > docs/cli.md`; do not edit by hand.
Global options (`--home`, `--agent`, `--set SECTION.KEY=VALUE`, `--verbose`) go before or after
the command: `memdir --agent coder mcp` and `memdir mcp --agent coder` are the same.
"""


def iter_commands(
    command: Any, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group, depth first, in the order people read them."""
    yield path, command
    for name in sorted(getattr(command, "commands", {})):
        yield from iter_commands(command.commands[name], (*path, name))


def render_reference(app: typer.Typer) -> str:
    root = typer.main.get_command(app)
    parts = [HEADER]
    for path, command in iter_commands(root):
        ctx = typer.Context(command, info_name=" ".join(("memdir", *path)), terminal_width=100,
                            max_content_width=100)  # fmt: skip
        title = " ".join(("memdir", *path))
        parts.append(f"## `{title}`\n\n```text\n{command.get_help(ctx).rstrip()}\n```\n")
    return "\n".join(parts)


def commands_without_help(app: typer.Typer) -> list[str]:
    root = typer.main.get_command(app)
    return [" ".join(path) for path, cmd in iter_commands(root) if path and not cmd.help]


def main() -> None:
    from memdir.interfaces.cli import app

    sys.stdout.write(render_reference(app))


if __name__ == "__main__":
    main()
