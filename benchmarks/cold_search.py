"""Cold search at scale: what a new process pays to search a large index, and what it holds.

Run: .venv/bin/python benchmarks/cold_search.py --dir DIR [--chunks 100000] [--queries 200] [--json]

Each step runs in a process of its own, so each peak RSS is that step's alone:

1. ``index``: writes the generated workspace (``memdir.bench.notes``) and indexes it with
   cheap hash vectors of the model's dimension, no graph (skipped when ``DIR/index.sqlite``
   exists: pass the same ``--dir`` to reuse it);
2. ``graph``: builds the vector graphs of the kinds past ``store.vector_graph_min_rows``
   (``store.optimize()``, as ``memdir index sync`` does), skipped when they exist;
3. ``search`` (twice): a new process opens the index, loads the local model and runs one
   search (``first_search_s``, from before the imports of memdir to its first result; the
   model load is part of it), then ``--queries`` generated questions (p50/p95, query
   embedding included) and reports its RSS then.

100k chunks make about 1.13M units (1.03M blocks); the first step takes minutes and the
graph several more on 2 cores.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402


def _rss_mb() -> dict[str, float]:
    """Resident set size of this process now (VmRSS; its anonymous part, the heap, and
    its file-backed part, pages of memory-mapped files such as a vector graph) and at
    its peak (ru_maxrss)."""
    fields = {"VmRSS:": "rss_mb", "RssAnon:": "anon_mb", "RssFile:": "file_mb"}
    out: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name = line.split(":")[0] + ":"
        if name in fields:
            out[fields[name]] = round(int(line.split()[1]) / 1024, 1)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def step_index(work: Path, chunks: int) -> dict[str, Any]:
    from memdir.bench.notes import write_workspace
    from memdir.bench.scale import CheapEmbedder
    from memdir.bench.workspace import build_index

    root = work / "workspace"
    counts = write_workspace(root, chunks)
    began = time.perf_counter()
    store, report = build_index(root, CheapEmbedder(384), db_path=work / "index.sqlite",
                                optimize=False)  # fmt: skip
    store.close()
    return {"workspace": counts, "units": report.units_written,
            "index_s": round(time.perf_counter() - began, 1), **_rss_mb()}  # fmt: skip


def step_graph(work: Path) -> dict[str, Any]:
    from memdir.store.sqlite import SqliteStore
    from memdir.store.sqlite.vectors.graph import graph_files

    db = work / "index.sqlite"
    began = time.perf_counter()
    with SqliteStore.open(db, tokenizer=None) as store:
        built = store.optimize()
        rows = store.stats().extra.get("vector_graphs", {})
    size = sum(f.stat().st_size for f in graph_files(db, "*")) / 2**20
    return {"built": built, "graph_rows": rows, "graph_s": round(time.perf_counter() - began, 1),
            "graph_mb": round(size, 1), **_rss_mb()}  # fmt: skip


def step_search(work: Path, queries: int) -> dict[str, Any]:
    from memdir.bench.notes import sample_queries
    from memdir.bench.scale import measure_search
    from memdir.bench.workspace import SOURCE
    from memdir.embeddings import create_embedder
    from memdir.search import SearchOptions, search
    from memdir.store.sqlite import SqliteStore

    embedder = create_embedder("local")
    store = SqliteStore.open(work / "index.sqlite", tokenizer=None)
    search(
        store,
        embedder,
        "what did we decide about the release",
        sources=[SOURCE],
        options=SearchOptions(),
    )
    first = time.perf_counter() - STARTED
    after_first = _rss_mb()
    latency = measure_search(store, embedder, sample_queries(queries), SearchOptions())
    store.close()
    return {"first_search_s": round(first, 2), "after_first": after_first,
            "search": latency, "after_searches": _rss_mb()}  # fmt: skip


def _child(step: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "--step", step, "--dir", str(args.dir),
               "--chunks", str(args.chunks), "--queries", str(args.queries)]  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"step {step} failed:\n{done.stderr}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["wall_s"] = round(time.perf_counter() - began, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--dir", type=Path, required=True, help="where the index is (kept)")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--step", choices=["index", "graph", "search"], help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print one JSON object only")
    args = parser.parse_args()
    if args.step == "index":
        print(json.dumps(step_index(args.dir, args.chunks)))
        return
    if args.step == "graph":
        print(json.dumps(step_graph(args.dir)))
        return
    if args.step == "search":
        print(json.dumps(step_search(args.dir, args.queries)))
        return
    args.dir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {}
    if not (args.dir / "index.sqlite").exists():
        report["index"] = _child("index", args)
    report["graph"] = _child("graph", args)
    report["search"] = [_child("search", args) for _ in range(2)]
    report["index_mb"] = round((args.dir / "index.sqlite").stat().st_size / 2**20, 1)
    if not args.json:
        for name, value in report.items():
            print(f"{name}: {json.dumps(value)}")
    else:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
