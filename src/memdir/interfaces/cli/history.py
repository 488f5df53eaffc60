"""History commands: ``history``, ``diff``, ``undo`` and ``restore`` (docs/history.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memdir.interfaces.cli._app import JsonOption, make_app, print_json, state
from memdir.interfaces.cli.terminal import for_terminal

if TYPE_CHECKING:
    from memdir.memory.versions import ArchiveImport

archive_app = make_app("A home as one file: its whole history, to carry to another machine.")

Reason = Annotated[str | None, typer.Option(help="Why (kept in the history).")]


def register(app: typer.Typer) -> None:
    app.command("history")(history)
    app.command("diff")(diff)
    app.command("undo")(undo)
    app.command("restore")(restore)
    app.command("sync")(sync)
    app.add_typer(archive_app, name="archive")
    app.command("trace")(trace)


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
        typer.echo(for_terminal(memory.history_diff(version, path)), nl=False)


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


def sync(
    ctx: typer.Context,
    remote: Annotated[
        str,
        typer.Option(
            "--remote",
            help="A git remote you own: a URL or the path of a bare repository "
            "(`git init --bare`).",
        ),
    ],
    as_json: JsonOption = False,
) -> None:
    """Merge this home's history with a git remote and push it; then index what changed."""
    with state(ctx).open_memory() as memory:
        result = memory.sync_remote(remote)
    if as_json:
        print_json(result)
        return
    typer.echo(f"synced with {remote}: {len(result.changed)} files changed here")
    for copy in result.conflicts:
        typer.echo(f"conflict kept for review: {copy}")


@archive_app.command("export")
def archive_export(
    ctx: typer.Context,
    target: Annotated[Path, typer.Argument(help="The archive file to write.")],
) -> None:
    """Write every version of every workspace file of this home, and its settings without
    secrets, to one file."""
    from memdir.memory.archive_settings import portable_settings

    with state(ctx).open_memory() as memory:
        written = memory.export_archive(target)
        left_out = portable_settings(memory.home).left_out
    typer.echo(f"wrote {written}")
    for item in left_out:
        typer.echo(f"left out {item.what} of {item.key}: {item.why}")


@archive_app.command("import")
def archive_import(
    ctx: typer.Context,
    source: Annotated[Path, typer.Argument(help="An archive `memdir archive export` wrote.")],
    settings: Annotated[
        bool,
        typer.Option("--settings/--no-settings", help="Add the archive's settings to memdir.toml."),
    ] = True,
) -> None:
    """Restore an archive into this home (--home of a new folder), add its settings to
    this home's memdir.toml (not [store] or the server's address, which belong to this
    machine) and index it."""
    with state(ctx).open_memory() as memory:
        done = memory.import_archive(source, settings=settings, index=False)
    typer.echo(f"imported version {done.version[:12]} into {memory.home}")
    for line in describe_import(done, asked=settings):
        typer.echo(line)
    # said before indexing: an embedder the settings name may need a key set here first
    with state(ctx).open_memory() as memory:  # now with the archive's settings in force
        memory.sync(all_agents=True)


def trace(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="How many entries.")] = 20,
    kind: Annotated[
        str | None, typer.Option(help="Only searches (search) or only recalls (recall).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Show the last searches and recalls, what they found and for whom (trace.enabled)."""
    from memdir.history.trace import KINDS, TRACE_OFF

    if kind is not None and kind not in KINDS:
        raise typer.BadParameter(f"use --kind search or --kind recall, not {kind!r}")
    with state(ctx).open_memory() as memory:
        read = memory.trace.read(limit, kind)
        enabled = memory.trace.enabled
    if as_json:
        print_json({"enabled": enabled, "entries": read.entries, "skipped": read.skipped})
        return
    if not enabled:
        typer.echo(TRACE_OFF)
    for entry in read.entries:
        keys = ("agent", "token", "session", "tool")
        who = " ".join(f"{k}={entry[k]}" for k in keys if k in entry)
        hits = ", ".join(
            f"{h.get('cited') or h.get('fact')} ({h.get('score')})"
            for h in entry.get("hits", []) if isinstance(h, dict)
        ) or "nothing"  # fmt: skip
        typer.echo(
            f"{entry.get('time', '?')}  {entry.get('kind', '?')} {entry.get('query', '')!r}"
            f"  {who}\n    -> {hits}"
        )
    if read.skipped:
        typer.echo(f"skipped {read.skipped} unreadable line(s) of {memory.trace.path}")


def describe_import(done: ArchiveImport, asked: bool) -> list[str]:
    """What an import did with the archive's settings, a line each."""
    if done.legacy:
        return ["settings: none (the archive predates settings in archives)"]
    if done.settings is None:
        return ["settings: not applied (--no-settings)" if not asked else "settings: none"]
    lines = [f"applied setting {key}" for key in done.settings.applied]
    lines += [f"not applied {key}: {why}" for key, why in done.settings.kept]
    lines += [f"not in the archive: {i.what} of {i.key} ({i.why})" for i in done.left_out]
    return lines or ["settings: none"]
