"""``memdir bench``: benchmarks that print figures (they are not tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from memdir.interfaces.cli._app import make_app, progress_bar

app = make_app("Run benchmarks and print figures (JSON).")


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

    sizes = tuple(int(b) for b in budgets.split(","))
    with progress_bar("locomo") as bar:

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar(done, total, "conversations")

        result = run_locomo(data, budgets=sizes, k=k, retriever=retriever, progress=progress)
    typer.echo(json.dumps(result, indent=1))


@app.command("scale")
def scale(
    chunks: Annotated[int, typer.Option(help="Chunks in the generated workspace.")] = 10_000,
    vectors: Annotated[
        str, typer.Option(help="cheap (fast stand-in vectors) or model (embed everything).")
    ] = "cheap",
    queries: Annotated[int, typer.Option(help="Search queries to time.")] = 200,
    backend: Annotated[str, typer.Option(help="Vector backend: auto, numpy, sqlite-vec.")] = "auto",
) -> None:
    """Index throughput, search p50/p95 (with query embedding), peak RSS, unchanged re-sync."""
    from memdir.bench.scale import run_scale

    if vectors not in ("cheap", "model") or backend not in ("auto", "numpy", "sqlite-vec"):
        raise typer.BadParameter("use --vectors cheap|model and --backend auto|numpy|sqlite-vec")
    result = run_scale(
        chunks, vectors=vectors, queries=queries, vector_backend=backend,  # type: ignore[arg-type]
        progress=lambda message: typer.echo(message, err=True),
    )  # fmt: skip
    typer.echo(json.dumps(result, indent=1, default=str))
