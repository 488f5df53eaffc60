"""``memdir files insert|rename|delete|append-daily``: changes that never lose one made
meanwhile (``--expected-sha256``), and a multi-line entry for today's note."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from memdir.interfaces.cli._app import JsonOption, print_json, state
from memdir.interfaces.cli.workspace import ExpectedShaOption


def register(files: typer.Typer) -> None:
    """Add the commands to ``memdir files``."""
    files.command("insert")(files_insert)
    files.command("rename")(files_rename)
    files.command("delete")(files_delete)
    files.command("append-daily")(files_append_daily)


TextOption = Annotated[
    str | None, typer.Option("--text", help="The text; read from stdin when omitted.")
]


def files_insert(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Workspace-relative .md path.")],
    line: Annotated[int, typer.Argument(min=0, help="0: before the first line; n: after line n.")],
    text: TextOption = None,
    expected_sha256: ExpectedShaOption = None,
) -> None:
    """Insert lines into a workspace file after line LINE, keeping every other line."""
    body = sys.stdin.read() if text is None else text
    with state(ctx).open_memory() as memory:
        after = memory.insert_lines(path, line, body, expected_sha256=expected_sha256)
    typer.echo(f"inserted into {after.path} (sha256 {after.sha256})")


def files_rename(
    ctx: typer.Context,
    old_path: Annotated[str, typer.Argument(help="The file to move.")],
    new_path: Annotated[str, typer.Argument(help="Where to: a free .md path.")],
    expected_sha256: ExpectedShaOption = None,
) -> None:
    """Rename or move a workspace file; never over an existing file."""
    with state(ctx).open_memory() as memory:
        old, new = memory.rename_file(old_path, new_path, expected_sha256=expected_sha256)
    typer.echo(f"renamed {old} to {new}")


def files_delete(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Workspace-relative .md path.")],
    expected_sha256: ExpectedShaOption = None,
) -> None:
    """Delete a workspace file of this workspace; it leaves the search index."""
    with state(ctx).open_memory() as memory:
        memory.delete_file(path, expected_sha256=expected_sha256)
    typer.echo(f"deleted {path}")


def files_append_daily(
    ctx: typer.Context, text: TextOption = None, as_json: JsonOption = False
) -> None:
    """Append an entry (one line or many) to today's daily note, under the note's lock."""
    body = sys.stdin.read() if text is None else text
    with state(ctx).open_memory() as memory:
        where = memory.append_daily(body)
    if as_json:
        print_json({**vars(where), "citation": where.cite()})
    else:
        typer.echo(f"appended {where.cite()}")
