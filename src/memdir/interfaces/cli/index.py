"""Index and search commands: ``index sync|rebuild|status``, ``search`` and ``watch``."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated

import typer

from memdir.interfaces.cli._app import (
    JsonOption,
    console,
    make_app,
    print_json,
    state,
)
from memdir.interfaces.cli.terminal import for_terminal

index_app = make_app("Build and inspect the search index (derived from the files).")


def register(app: typer.Typer) -> None:
    app.add_typer(index_app, name="index")
    app.command("search")(search)
    app.command("watch")(watch)


def _print_report(report: object, as_json: bool) -> None:
    if as_json:
        print_json(report)
        return
    typer.echo(report.summary() if hasattr(report, "summary") else str(report))


@index_app.command("sync")
def sync(
    ctx: typer.Context,
    as_json: JsonOption = False,
) -> None:
    """Index new, changed, renamed and deleted files (unchanged text is never re-embedded).

    A unit kind of store.vector_graph_min_rows vectors or more then gets its vector graph
    (re)built when it has none or it is outdated: minutes at a million rows.
    """
    from memdir.interfaces.cli.progress import show_progress

    with state(ctx).open_memory() as memory, show_progress("memdir index sync") as progress:
        report = memory.sync(progress=progress)
    _print_report(report, as_json)


@index_app.command("rebuild")
def rebuild(
    ctx: typer.Context,
    as_json: JsonOption = False,
) -> None:
    """Delete the derived index and rebuild it from the Markdown files."""
    from memdir.interfaces.cli.progress import show_progress

    with state(ctx).open_memory() as memory, show_progress("memdir index rebuild") as progress:
        report = memory.rebuild(progress=progress)
    _print_report(report, as_json)


@index_app.command("status")
def status(
    ctx: typer.Context,
    as_json: JsonOption = False,
) -> None:
    """Show what the index holds and which embedder built it."""
    with state(ctx).open_memory() as memory:
        stats = memory.index_status()
    if as_json:
        print_json(stats)
        return
    identity = stats.identity
    built_by = (
        f"{identity.provider} {identity.model} ({identity.dimensions} dimensions)"
        if identity is not None
        else "none (keyword-only, or nothing indexed yet)"
    )
    rows = [
        ("index", stats.db_path),
        ("files", f"{stats.files:,}"),
        ("chunks", f"{stats.chunks:,}"),
        ("blocks", f"{stats.blocks:,}"),
        ("vectors", f"{stats.vectors:,}"),
        ("cached embeddings", f"{stats.cached_embeddings:,}"),
        ("embedder", built_by),
        ("vector backend", stats.vector_backend),
        *((key.replace("_", " "), _readable(value)) for key, value in stats.extra.items()),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        typer.echo(f"{name:<{width}}  {value}")


def _readable(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_readable(v)}" for k, v in value.items()) or "none"
    return str(value)


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    max_results: Annotated[
        int | None,
        typer.Option(
            "--limit",
            "--max-results",
            "-n",
            min=1,
            max=100,
            help="How many hits, 1-100 (default: search.max_results).",
        ),
    ] = None,
    min_score: Annotated[
        float | None, typer.Option(min=0.0, help="Drop hits below this score.")
    ] = None,
    scope: Annotated[str, typer.Option(help="agent, global or all.")] = "agent",
    explain: Annotated[bool, typer.Option("--explain", help="Show the score breakdown.")] = False,
    no_sync: Annotated[bool, typer.Option("--no-sync", help="Skip the index sync.")] = False,
    history: Annotated[
        bool,
        typer.Option(
            "--history",
            help="Also show lines of superseded or forgotten facts, last and marked RETIRED.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Hybrid search over memory files; hits cite path:start-end (the memory_search tool)."""
    from memdir.tools import SearchOutput

    with state(ctx).open_memory() as memory:  # a new process: the search syncs first
        found = memory.search(
            query, max_results=max_results, min_score=min_score, scope=scope,
            include_history=history, fresh=not no_sync,
        )  # fmt: skip
    results = SearchOutput.of(query, found)
    if as_json:
        print_json(results.model_dump(mode="json"))
        return
    if not results.hits:
        hint = " (--min-score 0 shows the weak matches)" if results.below_floor else ""
        typer.echo(f"{results.notice}{hint}")
    for hit in results.hits:
        retired = "" if hit.retired is None else f"  RETIRED: {hit.retired.summary}"
        console.print(
            f"[bold]{hit.citation}[/bold]  score {hit.score:.3f}{retired}",
            highlight=False,
            soft_wrap=True,
        )
        if explain:
            parts = ", ".join(f"{k}={v:.3f}" for k, v in hit.breakdown.items())
            console.print(f"  [dim]{parts}[/dim]", highlight=False)
        for line in hit.text.splitlines():
            console.print(f"  {for_terminal(line)}", highlight=False, markup=False)
        if hit.truncated:
            cut = f"cut: {len(hit.text):,} of {hit.chars:,} characters shown"
            lines = f"--from {hit.start_line} --lines {hit.end_line - hit.start_line + 1}"
            console.print(
                f"  [{cut}; all of it: memdir get {hit.path} {lines}]",
                highlight=False, markup=False, soft_wrap=True,
            )  # fmt: skip
    if results.hits and results.searched_files is not None:
        typer.echo(f"Searched {results.searched_files} file(s).")


def watch(ctx: typer.Context) -> None:
    """Re-index Markdown files as they change, until interrupted (Ctrl-C)."""
    from memdir.index import Watcher

    stop = threading.Event()
    with state(ctx).open_memory() as memory:
        memory.sync()
        roots = [memory.workspace.global_root, memory.workspace.root]

        def on_change(paths: set[Path]) -> None:
            report = memory.sync()
            typer.echo(f"{len(paths)} change(s): {report.summary()}")

        watcher = Watcher(sorted(set(roots)), on_change,
                          debounce_ms=memory.settings.index.watch_debounce_ms)  # fmt: skip
        watcher.start()
        typer.echo(f"watching {', '.join(str(r) for r in set(roots))}; Ctrl-C to stop")
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
        finally:
            watcher.stop()
