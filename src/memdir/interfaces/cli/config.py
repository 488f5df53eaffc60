"""``memdir config``: show the effective configuration and where each value came from."""

from __future__ import annotations

import typer
from rich.table import Table

from memdir.interfaces.cli._app import JsonOption, console, make_app, print_json, state

app = make_app("Inspect the configuration.")


@app.command("show")
def show(
    ctx: typer.Context,
    as_json: JsonOption = False,
) -> None:
    """Print every setting, its value and its origin (default, memdir.toml, env, flag)."""
    loaded = state(ctx).settings()
    values = list(loaded.values())
    if as_json:
        print_json({"home": str(loaded.home), "settings": values})
        return
    table = Table("setting", "value", "origin", title=f"memdir configuration ({loaded.home})")
    for item in values:
        table.add_row(item.key, repr(item.value), item.origin)
    console.print(table)
