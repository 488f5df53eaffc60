"""Workspace commands: init, prompt, context, get and ``files``."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table

from memdir.interfaces.cli._app import (
    JsonOption,
    console,
    err_console,
    make_app,
    print_json,
    state,
)
from memdir.interfaces.cli.terminal import for_terminal

files_app = make_app("List, read, write and edit workspace Markdown files.")
prompt_files_app = make_app(
    "Which workspace files enter the system prompt, and in what order (prompt.toml)."
)
ritual_app = make_app("The first-run ritual: BOOTSTRAP.md guides a new workspace's first talk.")

SessionKindOption = Annotated[
    str | None,
    typer.Option(
        "--session-kind",
        help="private (you and your human), group or shared: the latter two leave "
        "MEMORY.md, the facts and private details out (default: prompt.session_kind).",
    ),
]


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("prompt")(prompt)
    app.command("context")(context)
    app.command("get")(get)
    app.command("recent")(recent)
    app.add_typer(files_app, name="files")
    app.add_typer(prompt_files_app, name="prompt-files")
    app.add_typer(ritual_app, name="ritual")


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


def prompt(ctx: typer.Context, session_kind: SessionKindOption = None) -> None:
    """Print the system prompt assembled from the workspace (BOOTSTRAP.md included while
    the first-run ritual lasts)."""
    with state(ctx).open_memory() as memory:
        typer.echo(memory.system_prompt(session_kind=session_kind))


def context(
    ctx: typer.Context,
    session_kind: SessionKindOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show what the system prompt carries: per-file status, prompt.toml order, raw and
    injected size, recent daily notes, skills and tools."""
    with state(ctx).open_memory() as memory:
        report = memory.context_report(session_kind=session_kind)
    totals = {
        "raw_chars": report.raw_chars,
        "injected_chars": report.injected_chars,
        "raw_tokens": report.raw_tokens,
        "injected_tokens": report.injected_tokens,
        "prompt_chars": report.prompt_chars,
        "prompt_tokens": report.prompt_tokens,
    }
    if as_json:
        print_json({
            "files": report.files, "budget": report.budget, "totals": totals,
            "session_kind": report.session_kind, "workspace": report.workspace,
            "skills": report.skills, "tools": report.tools,
            "recent_notes": report.recent_notes, "left_out": report.left_out,
        })  # fmt: skip
        return
    per_file = max(report.budget.per_file_chars, 1)
    table = Table("file", "status", "order", "raw chars", "injected chars", "injected tokens",
                  "of budget")  # fmt: skip
    for entry in (*report.files, *report.recent_notes):
        share = min(entry.injected_chars / per_file, 1.0)
        bar = f"{share:4.0%} " + "#" * round(share * 10)
        order = "" if entry.sort_order is None else str(entry.sort_order)
        row = (entry.raw_chars, entry.injected_chars, entry.injected_tokens)
        table.add_row(entry.name, str(entry.status), order, *map(str, row), bar)
    table.add_row("total", "", "", str(report.raw_chars), str(report.injected_chars),
                  str(report.injected_tokens), "")  # fmt: skip
    console.print(table)
    for entry in (*report.files, *report.recent_notes):
        if entry.note:
            typer.echo(f"{entry.name}: {entry.note}")
    typer.echo(f"workspace: {report.workspace} ({report.session_kind} session)")
    if report.left_out:
        typer.echo(f"left out of a {report.session_kind} session: {', '.join(report.left_out)}")
    typer.echo(f"skills: {report.skills}, tools: {report.tools}")
    typer.echo(f"system prompt: {report.prompt_chars} chars, ~{report.prompt_tokens} tokens")


@prompt_files_app.command("list")
def prompt_files_list(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """List the files the system prompt may carry, in order, with enabled and sort_order."""
    with state(ctx).open_memory() as memory:
        files = memory.prompt_files()
    if as_json:
        print_json(files)
        return
    for item in files:
        status = "enabled " if item.enabled else "disabled"
        typer.echo(f"{item.sort_order:>6}  {status}  {item.path}  ({item.origin})")


@prompt_files_app.command("set")
def prompt_files_set(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Workspace-relative .md path, e.g. MEMORY.md.")],
    enabled: Annotated[
        bool | None,
        typer.Option("--enable/--disable", help="Put the file into the prompt or leave it out."),
    ] = None,
    order: Annotated[
        int | None,
        typer.Option(
            "--order", help="sort_order: lower goes first (AGENTS.md 10 ... MEMORY.md 60)."
        ),
    ] = None,
) -> None:
    """Switch a file into or out of the system prompt and/or move it (writes prompt.toml)."""
    if enabled is None and order is None:
        raise typer.BadParameter("give --enable, --disable and/or --order N")
    with state(ctx).open_memory() as memory:
        item = memory.set_prompt_file(path, enabled=enabled, sort_order=order)
        where = memory.workspace.root / "prompt.toml"
    status = "enabled" if item.enabled else "disabled"
    typer.echo(f"{item.path}: {status}, sort_order {item.sort_order} (written to {where})")


@ritual_app.command("status")
def ritual_status(ctx: typer.Context) -> None:
    """Say whether the first-run ritual (this workspace's BOOTSTRAP.md) is under way."""
    with state(ctx).open_memory() as memory:
        active = memory.ritual_active
        root = memory.workspace.root
    typer.echo(
        f"first-run ritual under way: {root / 'BOOTSTRAP.md'} is in the prompt"
        if active
        else "no first-run ritual: this workspace has no BOOTSTRAP.md"
    )


@ritual_app.command("finish")
def ritual_finish(ctx: typer.Context) -> None:
    """End the first-run ritual now: delete this workspace's BOOTSTRAP.md."""
    with state(ctx).open_memory() as memory:
        finished = memory.finish_ritual()
    typer.echo(
        "first-run ritual finished: BOOTSTRAP.md deleted"
        if finished
        else "no first-run ritual to finish: this workspace has no BOOTSTRAP.md"
    )


def get(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Workspace-relative .md path.")],
    from_line: Annotated[
        int | None, typer.Option("--from", min=1, help="First line (1-based).")
    ] = None,
    lines: Annotated[int | None, typer.Option("--lines", min=1, help="How many lines.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Print lines of a workspace file, numbered (the memory_get tool)."""
    with state(ctx).open_memory() as memory:
        part = memory.get(path, from_line=from_line, lines=lines)
    if as_json:
        print_json(part)
        return
    if part.total_lines == 0:
        typer.echo(f"{part.path} is empty", err=True)
        return
    typer.echo(for_terminal(part.text))
    shown = f"lines {part.start_line}-{part.end_line} of {part.total_lines}"
    err_console.print(f"[dim]{part.path}: {shown}[/dim]", highlight=False)


def recent(
    ctx: typer.Context,
    days: Annotated[float, typer.Option(min=0.01, max=3650, help="How far back, in days.")] = 7,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many of each.")] = 20,
    as_json: JsonOption = False,
) -> None:
    """What changed lately: files written, facts saved, superseded or forgotten (memory_recent)."""
    with state(ctx).open_memory() as memory:
        activity = memory.recent(days=days, limit=limit)
    if as_json:
        print_json(activity)
        return
    typer.echo(f"since {activity.since.astimezone():%Y-%m-%d %H:%M}")
    typer.echo("files written:" if activity.files else "files written: none")
    for change in activity.files:
        typer.echo(f"  {change.modified.astimezone():%Y-%m-%d %H:%M}  {change.path}")
    if activity.more_files:
        typer.echo(f"  ... and {activity.more_files} more (--limit)")
    typer.echo("facts changed:" if activity.facts else "facts changed: none")
    for fact_change in activity.facts:
        fact = fact_change.fact
        at = f"{fact_change.at.astimezone():%Y-%m-%d %H:%M}"
        typer.echo(f"  {at}  {fact_change.kind:<10}  [{fact.id}] {fact.text}")
    if activity.more_facts:
        typer.echo(f"  ... and {activity.more_facts} more (--limit)")


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


ExpectedShaOption = Annotated[
    str | None,
    typer.Option(
        "--expected-sha256",
        help="The sha256 `memdir files read PATH --json` gave: change the file only if it "
        "still holds that text.",
    ),
]


@files_app.command("read")
def files_read(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help=".md path")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print path, content and sha256 as JSON.")
    ] = False,
) -> None:
    """Print a workspace file (--json: with the sha256 of its text)."""
    with state(ctx).open_memory() as memory:
        read = memory.read_text(path)
    if as_json:
        print_json({"path": read.path, "content": read.content, "sha256": read.sha256})
    else:
        sys.stdout.write(for_terminal(read.content))


@files_app.command("write")
def files_write(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Workspace-relative .md path.")],
    content: Annotated[
        str | None, typer.Option(help="New content; read from stdin when omitted.")
    ] = None,
    expected_sha256: ExpectedShaOption = None,
    create_only: Annotated[
        bool, typer.Option("--create-only", help="Only create a new file; fail if it exists.")
    ] = False,
) -> None:
    """Replace a workspace file atomically (content from --content or stdin)."""
    text = sys.stdin.read() if content is None else content
    with state(ctx).open_memory() as memory:
        memory.write_file(path, text, expected_sha256=expected_sha256, create_only=create_only)
    typer.echo(f"wrote {path} ({len(text)} chars)")


@files_app.command("edit")
def files_edit(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Workspace-relative .md path.")],
    old_text: Annotated[str, typer.Option("--old", help="Exact text to find.")],
    new_text: Annotated[str, typer.Option("--new", help="Replacement text.")],
    replace_all: Annotated[bool, typer.Option("--all", help="Replace every occurrence.")] = False,
    expected_sha256: ExpectedShaOption = None,
) -> None:
    """Exact find-and-replace in a workspace file."""
    with state(ctx).open_memory() as memory:
        count = memory.edit_file(
            path, old_text, new_text, replace_all=replace_all, expected_sha256=expected_sha256
        )
    typer.echo(f"replaced {count} occurrence{'s' if count != 1 else ''} in {path}")
