"""History commands: ``history``, ``diff``, ``undo`` and ``restore`` (docs/history.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from memdir.interfaces.cli._app import JsonOption, print_json, state

Reason = Annotated[str | None, typer.Option(help="Why (kept in the history).")]


def register(app: typer.Typer) -> None:
    app.command("history")(history)
    app.command("diff")(diff)
    app.command("undo")(undo)
    app.command("restore")(restore)


def history(
    ctx: typer.Context,
    path: Annotated[
        str | None, typer.Argument(help="A workspace file, e.g. MEMORY.md; omit for all.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help="How many versions.")] = 20,
    as_json: JsonOption = False,
) -> None:
    """List the versions of the workspace's files, newest first (the memory_history tool)."""
    from memdir.tools.versions import VersionOutput, render_version

    with state(ctx).open_memory() as memory:
        versions = memory.history_versions(path, limit=limit)
    if as_json:
        print_json({"versions": [VersionOutput.of(v).model_dump(mode="json") for v in versions]})
        return
    typer.echo("\n".join(render_version(v) for v in versions) or "no versions yet")


def diff(
    ctx: typer.Context,
    version: Annotated[str, typer.Argument(help="A version id from `memdir history`.")],
    path: Annotated[str | None, typer.Argument(help="Only this file's part.")] = None,
) -> None:
    """Show what a version changed, as a unified diff (the memory_diff tool)."""
    with state(ctx).open_memory() as memory:
        typer.echo(memory.history_diff(version, path), nl=False)


def undo(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="The file whose last change to undo.")],
    reason: Reason = None,
) -> None:
    """Undo the last change of a file: it goes back to how it was (itself a version)."""
    from memdir.history import attributed

    with state(ctx).open_memory() as memory, attributed(tool="memdir undo"):
        undone = memory.undo(path, reason=reason)
    typer.echo(f"undid version {undone[:12]} of {path}")


def restore(
    ctx: typer.Context,
    version: Annotated[str, typer.Argument(help="A version id from `memdir history`.")],
    path: Annotated[str, typer.Argument(help="The file to put back as it was then.")],
    reason: Reason = None,
) -> None:
    """Put a file back as it was at a version (itself a new version)."""
    from memdir.history import attributed

    with state(ctx).open_memory() as memory, attributed(tool="memdir restore"):
        memory.restore(version, path, reason=reason)
    typer.echo(f"restored {path} as of version {version}")
