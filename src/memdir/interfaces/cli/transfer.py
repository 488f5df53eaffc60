"""``memdir export`` and ``memdir import``: the home's workspace files to and from PostgreSQL.

``import`` copies every workspace Markdown file of the home (the global
workspace and every agent) into the files table; ``export`` writes the table's
files into the home. Neither overwrites a newer file without ``--force``, and
``--dry-run`` shows what would change. The table lives in its own schema
(default ``<store.schema_name>_files``), never in the index's, which
``memdir index rebuild`` drops.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memdir.errors import ConfigError
from memdir.interfaces.cli._app import JsonOption, MemdirGroup, print_json, state

if TYPE_CHECKING:  # the PostgreSQL driver loads when a transfer runs, not for --help
    from memdir.store.postgres.files import TransferReport

Transfer = Callable[..., "TransferReport"]

DsnOption = Annotated[
    str | None,
    typer.Option("--dsn", help="PostgreSQL connection string (default: store.dsn)."),
]
SchemaOption = Annotated[
    str | None,
    typer.Option(
        help="Schema of the files table (default: store.files_schema, else <schema_name>_files)."
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Show what would change; write nothing.")
]
ForceOption = Annotated[
    bool, typer.Option("--force", help="Overwrite files that are newer on the other side.")
]

_QUIET = ("unchanged",)


def register(app: typer.Typer) -> None:
    from memdir.interfaces.cli import foreign

    app.command("export")(export_files)
    import_app = typer.Typer(
        cls=MemdirGroup,
        invoke_without_command=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    import_app.callback()(import_files)  # `memdir import` alone: the files to PostgreSQL
    foreign.register(import_app)  # `memdir import claude-code|openclaw|codex FOLDER`
    app.add_typer(import_app, name="import")


def _target(ctx: typer.Context, dsn: str | None, schema: str | None) -> tuple[str, str, Path]:
    """(DSN, files schema, home) from the options and the settings."""
    loaded = state(ctx).settings()
    store = loaded.settings.store
    dsn = dsn or store.dsn
    if not dsn:
        raise ConfigError(
            "no PostgreSQL connection string; pass --dsn 'postgresql://user@host/dbname' "
            "or set store.dsn (MEMDIR_STORE__DSN)"
        )
    schema = schema or store.files_schema_name
    if schema == store.schema_name:
        raise ConfigError(
            f"--schema {schema!r} is the index schema, which `memdir index rebuild` drops; "
            "keep the workspace files in another schema (the default is store.files_schema, "
            f"else '{store.schema_name}_files')"
        )
    return dsn, schema, loaded.home


def _render(report: TransferReport, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "direction": report.direction,
                "dry_run": report.dry_run,
                "counts": report.counts,
                "items": report.items,
            }
        )
    else:
        prefix = "would be " if report.dry_run else ""
        for item in report.items:
            if item.action not in _QUIET:
                detail = f" ({item.detail})" if item.detail else ""
                typer.echo(f"{prefix}{item.action}: {item.source} {item.path}{detail}")
        typer.echo(report.summary())
    if not report.ok:
        raise typer.Exit(1)


def _run(
    ctx: typer.Context,
    transfer: Transfer,
    dsn: str | None,
    schema: str | None,
    force: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    from memdir.interfaces.cli.progress import show_progress
    from memdir.store.postgres.files import PostgresFileTable

    dsn, schema, home = _target(ctx, dsn, schema)
    label = f"memdir {transfer.__name__.split('_')[0]}"  # memdir export / memdir import
    with PostgresFileTable.open(dsn, schema) as table, show_progress(label) as progress:
        report = transfer(table, home, force=force, dry_run=dry_run, progress=progress)
    _render(report, as_json)


def export_files(
    ctx: typer.Context,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    dry_run: DryRunOption = False,
    force: ForceOption = False,
    as_json: JsonOption = False,
) -> None:
    """Write the workspace files kept in PostgreSQL into the home (every agent and global)."""
    from memdir.store.postgres.files import export_to_directory

    _run(ctx, export_to_directory, dsn, schema, force, dry_run, as_json)


def import_files(
    ctx: typer.Context,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    dry_run: DryRunOption = False,
    force: ForceOption = False,
    as_json: JsonOption = False,
) -> None:
    """Copy the home's workspace files (every agent and global) into PostgreSQL; with a
    tool's name, import that tool's Markdown memories as an agent workspace."""
    if ctx.invoked_subcommand is not None:
        return
    from memdir.store.postgres.files import import_from_directory

    _run(ctx, import_from_directory, dsn, schema, force, dry_run, as_json)
