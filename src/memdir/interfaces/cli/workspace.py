"""Workspace commands: init, prompt, context, get and ``files``."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table

from memdir.interfaces.cli._app import JsonOption, console, make_app, print_json, state

files_app = make_app("List, read, write and edit workspace Markdown files.")


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("prompt")(prompt)
    app.command("context")(context)
    app.command("get")(get)
    app.add_typer(files_app, name="files")


def init(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option(help="Agent name (for --agent).")] = None,
    description: Annotated[str | None, typer.Option(help="Agent description.")] = None,
) -> None:
    """Create the home and seed the workspace (only missing files are written)."""
    with state(ctx).open_memory() as memory:
        created = memory.init(name=name, description=description)
        root = memory.workspace.root
    for path in created:
        typer.echo(f"created {path}")
    typer.echo(f"workspace ready at {root}" + ("" if created else " (nothing to create)"))


def prompt(ctx: typer.Context) -> None:
    """Print the system prompt assembled from the workspace."""
    with state(ctx).open_memory() as memory:
        typer.echo(memory.system_prompt())


def context(
    ctx: typer.Context,
    as_json: JsonOption = False,
) -> None:
    """Show what the system prompt carries: per-file status, raw and injected size."""
    with state(ctx).open_memory() as memory:
        report = memory.context_report()
    totals = {
        "raw_chars": report.raw_chars,
        "injected_chars": report.injected_chars,
        "raw_tokens": report.raw_tokens,
        "injected_tokens": report.injected_tokens,
        "prompt_chars": report.prompt_chars,
        "prompt_tokens": report.prompt_tokens,
    }
    if as_json:
        print_json({"files": report.files, "budget": report.budget, "totals": totals})
        return
    per_file = max(report.budget.per_file_chars, 1)
    table = Table("file", "status", "raw chars", "injected chars", "injected tokens", "of budget")
    for entry in report.files:
        share = min(entry.injected_chars / per_file, 1.0)
        bar = f"{share:4.0%} " + "#" * round(share * 10)
        row = (entry.raw_chars, entry.injected_chars, entry.injected_tokens)
        table.add_row(entry.name, str(entry.status), *map(str, row), bar)
    table.add_row("total", "", str(report.raw_chars), str(report.injected_chars),
                  str(report.injected_tokens), "")  # fmt: skip
    console.print(table)
    typer.echo(f"system prompt: {report.prompt_chars} chars, ~{report.prompt_tokens} tokens")


def get(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Workspace-relative .md path.")],
    from_line: Annotated[int | None, typer.Option("--from", help="First line (1-based).")] = None,
    lines: Annotated[int | None, typer.Option("--lines", help="How many lines.")] = None,
) -> None:
    """Print a workspace file with line numbers (the memory_get tool)."""
    with state(ctx).open_memory() as memory:
        typer.echo(memory.get(path, from_line=from_line, lines=lines))


@files_app.command("list")
def files_list(
    ctx: typer.Context,
    prefix: Annotated[str, typer.Argument(help="Only paths starting with this.")] = "",
    as_json: JsonOption = False,
) -> None:
    """List the workspace's Markdown files."""
    with state(ctx).open_memory() as memory:
        paths = memory.list_files(prefix)
    if as_json:
        print_json(paths)
    else:
        for path in paths:
            typer.echo(path)


@files_app.command("read")
def files_read(ctx: typer.Context, path: Annotated[str, typer.Argument(help=".md path")]) -> None:
    """Print a workspace file."""
    with state(ctx).open_memory() as memory:
        sys.stdout.write(memory.read_file(path))


@files_app.command("write")
def files_write(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Workspace-relative .md path.")],
    content: Annotated[
        str | None, typer.Option(help="New content; read from stdin when omitted.")
    ] = None,
) -> None:
    """Replace a workspace file atomically (content from --content or stdin)."""
    text = sys.stdin.read() if content is None else content
    with state(ctx).open_memory() as memory:
        memory.write_file(path, text)
    typer.echo(f"wrote {path} ({len(text)} chars)")


@files_app.command("edit")
def files_edit(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Workspace-relative .md path.")],
    old_text: Annotated[str, typer.Option("--old", help="Exact text to find.")],
    new_text: Annotated[str, typer.Option("--new", help="Replacement text.")],
    replace_all: Annotated[bool, typer.Option("--all", help="Replace every occurrence.")] = False,
) -> None:
    """Exact find-and-replace in a workspace file."""
    with state(ctx).open_memory() as memory:
        count = memory.edit_file(path, old_text, new_text, replace_all=replace_all)
    typer.echo(f"replaced {count} occurrence{'s' if count != 1 else ''} in {path}")
