"""Scale benchmark: index throughput, search latency, memory and re-sync time.

``run_scale`` generates a synthetic workspace of about ``chunks`` chunks (plus
their blocks), then measures, in one process:

* raw embedding throughput of the model (units/s) on a sample of unit texts;
* index throughput with the real model on a subset of files (units/s, same model);
* full indexing, with the real model (``vectors="model"``) or, by default, with
  cheap 384-d hash vectors (``vectors="cheap"``), because embedding 100k+ units
  with the real model takes many minutes on 2 cores; the output says which;
* search latency p50/p95 over generated questions, including query embedding
  with the real model (vector search runs over whatever vectors were stored);
* time to build the vector graphs of large kinds (SQLite indexes past
  ``store.vector_graph_min_rows`` rows; zero below), timed apart from the sync;
* time to re-sync the unchanged workspace, peak RSS and index size.
"""

from __future__ import annotations

import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from memdir.bench.notes import sample_queries, write_workspace
from memdir.bench.workspace import SOURCE, build_index, list_sources
from memdir.embeddings.base import Embedder, HashEmbedder
from memdir.index import chunk_markdown
from memdir.search import SearchOptions, search
from memdir.store.sqlite.vectors.graph import GRAPH_MIN_ROWS, graph_files

VectorMode = Literal["cheap", "model"]
Progress = Callable[[str], None]


class CheapEmbedder(HashEmbedder):
    """Hash vectors with the model's dimension: fast to make, meaningless to rank by."""

    provider = "bench-cheap"


def peak_rss_mb() -> float:
    """Peak resident set size of this process (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def measure_embedding(embedder: Embedder, root: Path, units: int) -> dict[str, float]:
    """Embed about ``units`` unit texts of the workspace directly; units/s."""
    texts: list[str] = []
    for source in list_sources(root):
        texts += [s.text for s in chunk_markdown(source.abs_path.read_text(encoding="utf-8"))]
        if len(texts) >= units:
            break
    texts = texts[:units]
    embedder.embed_documents(texts[:1])  # load the model outside the timing
    started = time.perf_counter()
    embedder.embed_documents(texts)
    seconds = time.perf_counter() - started
    rate = _rate(len(texts), seconds)
    return {"units": len(texts), "seconds": round(seconds, 2), "units_per_s": rate}


def measure_indexing(embedder: Embedder, root: Path, units: int, work: Path) -> dict[str, float]:
    """Index a subset of files (about ``units`` units) with the real model; units/s."""
    subset = work / "subset"
    wanted = 0
    for source in list_sources(root):
        text = source.abs_path.read_text(encoding="utf-8")
        target = subset / source.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        wanted += len(chunk_markdown(text))
        if wanted >= units:
            break
    store, report = build_index(subset, embedder, db_path=work / "subset.sqlite")
    store.close()
    return {
        "units": report.units_written,
        "seconds": round(report.seconds, 2),
        "units_per_s": _rate(report.units_written, report.seconds),
    }


def measure_search(
    store: Any, embedder: Embedder | None, queries: list[str], options: SearchOptions
) -> dict[str, float]:
    """p50/p95 of ``search()`` including query embedding, after one warm-up query."""
    search(store, embedder, "warm up", sources=[SOURCE], options=options)
    latencies = []
    for query in queries:
        started = time.perf_counter()
        search(store, embedder, query, sources=[SOURCE], options=options)
        latencies.append(time.perf_counter() - started)
    ordered = sorted(latencies)
    return {
        "queries": len(queries),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }


def run_scale(
    chunks: int = 10_000,
    *,
    embedder: Embedder | None = None,
    vectors: VectorMode = "cheap",
    sample_units: int = 1_000,
    queries: int = 200,
    workdir: Path | None = None,
    graph_min_rows: int = GRAPH_MIN_ROWS,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the scale benchmark; ``embedder`` defaults to the registry's ``local`` model.

    ``graph_min_rows`` is the store's ``vector_graph_min_rows`` (0: never build a graph).
    """
    if embedder is None:
        from memdir.embeddings import create_embedder

        embedder = create_embedder("local")
    if embedder is None:
        raise ValueError("the scale benchmark needs an embedder")
    say = progress or (lambda _msg: None)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        work = Path(tmp)
        root = work / "workspace"
        say(f"writing a workspace of ~{chunks} chunks")
        counts = write_workspace(root, chunks)
        say("measuring raw embedding throughput")
        raw = measure_embedding(embedder, root, sample_units)
        say("indexing a subset with the model")
        subset = measure_indexing(embedder, root, sample_units, work)
        cheap = CheapEmbedder(embedder.dimensions)
        index_embedder: Embedder = embedder if vectors == "model" else cheap
        say(f"indexing everything ({vectors} vectors)")
        db = work / "index.sqlite"
        store, report = build_index(
            root,
            index_embedder,
            db_path=db,
            optimize=False,
            graph_min_rows=graph_min_rows,
        )
        say("building vector graphs (large kinds only)")
        graph_started = time.perf_counter()
        store.optimize(say)
        graph_seconds = time.perf_counter() - graph_started
        say("re-syncing the unchanged workspace")
        again_store, again = build_index(
            root, index_embedder, db_path=db, graph_min_rows=graph_min_rows
        )
        again_store.close()
        say("searching")
        latency = measure_search(store, embedder, sample_queries(queries), SearchOptions())
        stats = store.stats()
        store.close()
        size_mb = round(db.stat().st_size / 2**20, 1)
        graph_mb = round(sum(f.stat().st_size for f in graph_files(db, "*")) / 2**20, 1)
    return {
        "workspace": counts,
        "vectors": vectors,
        "embedding_raw": raw,
        "index_model_subset": {**subset, "vs_raw": _ratio(subset["units_per_s"], raw)},
        "index_full": {
            "units": report.units_written,
            "seconds": round(report.seconds, 2),
            "units_per_s": _rate(report.units_written, report.seconds),
            "with": "the model" if vectors == "model" else "cheap hash vectors (not the model)",
        },
        "vector_graphs": {
            "rows": stats.extra.get("vector_graphs", {}),
            "build_s": round(graph_seconds, 2),
            "mb": graph_mb,
        },
        "resync_unchanged_s": round(again.seconds, 3),
        "search": latency,
        "peak_rss_mb": peak_rss_mb(),
        "index_mb": size_mb,
        "note": _note(vectors),
    }


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else 0.0


def _ratio(rate: float, raw: dict[str, float]) -> float:
    return round(rate / raw["units_per_s"], 2) if raw["units_per_s"] else 0.0


def _note(vectors: VectorMode) -> str:
    if vectors == "model":
        return "all units embedded with the real model"
    return (
        "full index built with cheap hash vectors of the model's dimension so search latency "
        "can be measured at scale; model throughput is measured on a subset; queries are "
        "embedded with the real model"
    )


def main(argv: list[str] | None = None) -> None:
    """``python -m memdir.bench.scale --chunks 10000``: print the figures as JSON."""
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--vectors", choices=["cheap", "model"], default="cheap")
    parser.add_argument("--sample-units", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    out = run_scale(
        args.chunks,
        vectors=args.vectors,
        sample_units=args.sample_units,
        queries=args.queries,
        progress=lambda msg: print(msg, file=sys.stderr, flush=True),
    )
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
