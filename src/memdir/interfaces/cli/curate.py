"""Curation commands: ``extract``, ``consolidate`` and ``session list|end``."""

from __future__ import annotations

from typing import Annotated

import typer

from memdir.interfaces.cli._app import JsonOption, make_app, print_json, state

session_app = make_app("Conversation transcripts and session-end notes.")


def register(app: typer.Typer) -> None:
    app.command("extract")(extract)
    app.command("consolidate")(consolidate)
    app.add_typer(session_app, name="session")


def extract(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="The session (transcript) id.")],
    as_json: JsonOption = False,
) -> None:
    """Extract durable memory from a conversation (the model if configured, else heuristics)."""
    with state(ctx).open_memory() as memory:
        result = memory.extract(session_id)
    if as_json:
        print_json(result)
    elif not result.ran:
        typer.echo(f"skipped: {result.skipped_reason}")
    else:
        typer.echo(f"extraction ({result.method}): {result.reason or 'done'}")
        typer.echo(f"facts saved: {result.facts_saved}")
        for problem in result.problems:
            typer.echo(f"problem: {problem}")
        for proposal in result.proposals:
            typer.echo(f"proposed for review: {proposal} (`memdir proposals accept {proposal}`)")
        if result.error:
            typer.echo(f"error: {result.error}")


def consolidate(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the diff; write nothing.")
    ] = False,
    days: Annotated[int | None, typer.Option(min=1, help="Days of notes to read.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Promote what is stable in recent daily notes into MEMORY.md (shows the diff)."""
    from memdir.interfaces.cli.progress import show_progress

    with state(ctx).open_memory() as memory, show_progress("memdir consolidate") as progress:
        result = memory.consolidate(dry_run=dry_run, days=days, progress=progress)
    if as_json:
        print_json({"diff": result.diff, "written": result.written, "added": result.added,
                    "proposals": result.proposals})  # fmt: skip
        return
    typer.echo(result.diff or "nothing to promote")
    typer.echo("dry run: nothing written" if dry_run else f"written: {result.written}")
    for proposal in result.proposals:
        typer.echo(f"proposed for review: {proposal} (`memdir proposals accept {proposal}`)")


@session_app.command("list")
def session_list(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """List the conversation transcripts of this agent."""
    with state(ctx).open_memory() as memory:
        sessions = memory.sessions()
    if as_json:
        print_json(sessions)
        return
    for info in sessions:
        typer.echo(f"{info.session_id}\t{info.modified:%Y-%m-%d %H:%M}\t{info.size_bytes} bytes")


@session_app.command("end")
def session_end(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="The session (transcript) id.")],
) -> None:
    """Write the last messages of a session as memory/YYYY-MM-DD-<slug>.md (like /new)."""
    with state(ctx).open_memory() as memory:
        note = memory.end_session(session_id)
    typer.echo(f"wrote {note.path}" if note else "no user or assistant messages: nothing written")
