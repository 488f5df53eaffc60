"""``memdir bench``: benchmarks that print figures (they are not tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from memdir.interfaces.cli._app import make_app

app = make_app("Run benchmarks and print figures.")


@app.command("locomo")
def locomo(
    data: Annotated[
        Path, typer.Option(help="LoCoMo JSON file (e.g. ../shared/bench/locomo-dev.json).")
    ],
    budgets: Annotated[str, typer.Option(help="Token budgets, comma-separated.")] = "256,1024",
    k: Annotated[int, typer.Option(help="Hits asked of the retriever.")] = 20,
    retriever: Annotated[str, typer.Option(help="memdir, fts5-turn or fts5-chunk.")] = "memdir",
) -> None:
    """Budgeted evidence recall on LoCoMo conversations written as daily notes."""
    from memdir.bench.locomo import run_locomo

    result = run_locomo(
        data, budgets=tuple(int(b) for b in budgets.split(",")), k=k, retriever=retriever
    )
    typer.echo(json.dumps(result, indent=1))
