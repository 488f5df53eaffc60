"""Benchmark: keyword and vector search over 100,000 units (sqlite-vec and numpy backends).

Run: .venv/bin/python benchmarks/store_search.py [units] [dimensions]
Prints build time and the median latency of each query kind.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memdir.store import EmbedderIdentity, FileStamp, FileWrite, SqliteStore, Unit

WORDS = [f"w{n}" for n in range(5000)] + ["sqlite", "memory", "python", "deploy", "tea"]


def _median_ms(fn: Callable[[], object], repeat: int = 30) -> float:
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def build(store: SqliteStore, units: int, dims: int, rng: np.random.Generator) -> None:
    identity = EmbedderIdentity("bench", "random", dims)
    store.bind_identity(identity)
    per_file = 20
    writes = []
    for n in range(units // per_file):
        path = f"memory/f{n:06}.md"
        words = rng.choice(len(WORDS), size=(per_file, 40))
        batch = [
            Unit(
                "global" if n % 4 else "agent:a",
                path,
                "chunk" if i % 5 == 0 else "block",
                i + 1,
                i + 1,
                " ".join(WORDS[w] for w in row),
            )
            for i, row in enumerate(words)
        ]
        vectors = rng.standard_normal((per_file, dims)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        stamp = FileStamp(batch[0].source, path, f"{n}", 1, 1)
        writes.append(FileWrite(stamp, batch, vectors))
        if len(writes) == 100:
            store.write_files(writes)
            writes = []
    store.write_files(writes)


def main(units: int, dims: int) -> None:
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        for backend in ("sqlite-vec", "numpy"):
            with SqliteStore.open(Path(tmp) / f"{backend}.db", vector_backend=backend) as store:
                started = time.perf_counter()
                build(store, units, dims, rng)
                print(
                    f"[{backend}] built {units} units x {dims} dims in "
                    f"{time.perf_counter() - started:.1f} s"
                )
                report(store, rng.standard_normal(dims).astype(np.float32), backend)


def report(store: SqliteStore, query: np.ndarray, backend: str) -> None:
    both = ["global", "agent:a"]
    for label, fn in {
        "keyword rare term (block)": lambda: store.keyword_search('"w17"', both, "block", 20),
        "keyword common term (block)": lambda: store.keyword_search(
            '"sqlite" OR "memory"', both, "block", 20
        ),
        "keyword two terms AND (chunk)": lambda: store.keyword_search(
            '"w17" "w42"', ["global"], "chunk", 20
        ),
        "vector k=20 blocks, 2 sources": lambda: store.vector_search(query, both, "block", 20),
        "vector k=20 chunks, 1 source": lambda: store.vector_search(query, ["global"], "chunk", 20),
        "get_units(20) + get_vectors(20)": lambda: (
            store.get_units(range(1, 21)),
            store.get_vectors(range(1, 21)),
        ),
    }.items():
        print(f"[{backend}] {label}: {_median_ms(fn):.2f} ms")


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 100_000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 384,
    )
