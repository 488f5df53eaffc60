"""Benchmark: keyword and vector search over 100,000 units of the SQLite store.

Run: .venv/bin/python benchmarks/store_search.py [units] [dimensions] [real_texts] [--real-only]

Part 1 (random vectors): build time and p50/p95 of each store query.
Part 2 (realistic vectors): ``real_texts`` generated note-like texts
(default 3,000; 0 skips part 2) are embedded with the local MiniLM model; the rest
of the ``units`` are mixtures of two real embeddings plus noise (embedding 100k
texts on 2 cores takes about 25 minutes). Prints p50/p95 of ``vector_search``
alone and of ``memdir.search.search`` including query embedding and of its one
keyword pass (``keyword_search``, blocks and chunks), recall@10 and @40 of the
quantized search against exact cosine, and the vectors' memory and RSS (the keyword
ranking is held to FTS5's own by tests/store/test_keyword_ranker.py).
``--real-only`` skips part 1.
"""

from __future__ import annotations

import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memdir.embeddings import Embedder, create_embedder
from memdir.search import SearchOptions, keyword_query, search
from memdir.store import EmbedderIdentity, FileStamp, FileWrite, KeywordQuery, SqliteStore, Unit

WORDS = [f"w{n}" for n in range(5000)] + ["sqlite", "memory", "python", "deploy", "tea"]
SOURCES = ("global", "agent:a")
PEOPLE = ("Alice", "Bruno", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun")
PROJECTS = ("atlas", "billing", "checkout", "dashboard", "ingest", "ledger", "mobile", "sync")
TOOLS = ("postgres", "redis", "kafka", "terraform", "grafana", "sentry", "docker", "pytest")
ISSUES = (
    "the nightly export timed out",
    "p95 latency doubled after the deploy",
    "a flaky test blocked the release",
    "the cache hit rate dropped below sixty percent",
    "the migration locked the orders table for four minutes",
    "alerts were too noisy during the holiday freeze",
)


def _percentiles(fn: Callable[[int], object], count: int) -> tuple[float, float]:
    """p50 and p95 wall milliseconds; also records CPU time (see ``_cpu_note``)."""
    fn(0)
    times, cpu = [], []
    for n in range(count):
        started, used = time.perf_counter(), time.thread_time()
        fn(n)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - used) * 1000)
    _LAST_CPU[:] = [float(np.percentile(cpu, 50)), float(np.percentile(cpu, 95))]
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


_LAST_CPU = [0.0, 0.0]


def _cpu_note() -> str:
    """CPU-time p50/p95 of the last measurement: wall time suffers on a busy machine."""
    return f" (CPU p50 {_LAST_CPU[0]:.2f}, p95 {_LAST_CPU[1]:.2f})"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(
    store: SqliteStore,
    identity: EmbedderIdentity,
    texts: list[str],
    vectors: np.ndarray,
    kinds: list[str],
) -> None:
    """Write units 20 per file; unit ``n`` gets id ``n + 1`` in a fresh index."""
    store.bind_identity(identity)
    per_file, writes = 20, []
    for n in range(0, len(texts), per_file):
        source = SOURCES[0] if (n // per_file) % 4 else SOURCES[1]
        path = f"memory/f{n // per_file:06}.md"
        units = [
            Unit(source, path, "chunk" if kinds[i] == "chunk" else "block", i - n + 1, i - n + 1, t)
            for i, t in enumerate(texts[n : n + per_file], start=n)
        ]
        stamp = FileStamp(source, path, f"{n}", 1, 1)
        writes.append(FileWrite(stamp, units, vectors[n : n + per_file]))
        if len(writes) == 100:
            store.write_files(writes)
            writes = []
    store.write_files(writes)


def random_part(units: int, dims: int, tmp: Path) -> None:
    rng = np.random.default_rng(7)
    words = rng.choice(len(WORDS), size=(units, 40))
    texts = [" ".join(WORDS[w] for w in row) for row in words]
    kinds = ["chunk" if i % 5 == 0 else "block" for i in range(units)]
    vectors = rng.standard_normal((units, dims)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = rng.standard_normal(dims).astype(np.float32)
    with SqliteStore.open(tmp / "random.db") as store:
        started = time.perf_counter()
        build(store, EmbedderIdentity("bench", "random", dims), texts, vectors, kinds)
        seconds = time.perf_counter() - started
        print(f"[random] built {units} units x {dims} dims in {seconds:.1f} s")
        started = time.perf_counter()
        store.vector_search(query, list(SOURCES), "block", 20)
        print(
            "[random] first vector search (loads the vectors): "
            f"{(time.perf_counter() - started) * 1000:.0f} ms"
        )
        report_queries(store, query, "random")


def report_queries(store: SqliteStore, query: np.ndarray, backend: str) -> None:
    both = list(SOURCES)
    for label, fn in {
        "keyword rare term (block)": lambda: store.keyword_search(
            KeywordQuery(("w17",)), both, ("block",), 20
        ),
        "keyword common terms (block)": lambda: store.keyword_search(
            KeywordQuery(("sqlite", "memory")), both, ("block",), 20
        ),
        "keyword two terms (chunk)": lambda: store.keyword_search(
            KeywordQuery(("w17", "w42")), ["global"], ("chunk",), 20
        ),
        "vector k=20 blocks, 2 sources": lambda: store.vector_search(query, both, "block", 20),
        "vector k=20 chunks, 1 source": lambda: store.vector_search(query, ["global"], "chunk", 20),
        "get_units(20) + get_vectors(20)": lambda: (
            store.get_units(range(1, 21)),
            store.get_vectors(range(1, 21)),
        ),
    }.items():
        p50, p95 = _percentiles(lambda _n, fn=fn: fn(), 30)  # type: ignore[misc]
        print(f"[{backend}] {label}: p50 {p50:.2f} ms, p95 {p95:.2f} ms" + _cpu_note())


def note_texts(count: int, seed: int = 7) -> list[str]:
    """Short note-like lines and paragraphs (bullets, decisions, measurements)."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < count:
        p, j, t, issue = (rng.choice(x) for x in (PEOPLE, PROJECTS, TOOLS, ISSUES))
        out.setdefault(
            rng.choice(
                [
                    f"{p} moved the {j} service to {t}.",
                    f"{j}: {issue}; {p} owns the fix.",
                    f"Decided to keep {t} for {j} until Q{rng.randint(1, 4)}; revisit later.",
                    f"{p} measured {rng.randint(2, 900)} ms on {j} with {t}.",
                    f"{p} explained why {j} depends on {t} and what {issue} means for the "
                    f"roadmap. {rng.choice(PEOPLE)} disagreed about {rng.choice(TOOLS)}.",
                ]
            )
        )
    return list(out)


def realistic_part(units: int, real: int, tmp: Path) -> None:
    embedder = create_embedder("local")
    assert embedder is not None
    texts = note_texts(real)
    started = time.perf_counter()
    base = embedder.embed_documents(texts)
    print(f"[real] embedded {len(texts)} note texts in {time.perf_counter() - started:.0f} s")
    rng = np.random.default_rng(3)
    first, second = rng.integers(0, len(base), (2, units))
    weight = rng.uniform(0.5, 1.0, (units, 1)).astype(np.float32)
    noise = rng.normal(0, 0.02, (units, base.shape[1])).astype(np.float32)
    vectors = weight * base[first] + (1 - weight) * base[second] + noise
    vectors[: len(base)] = base
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    kinds = ["chunk" if i % 5 == 0 else "block" for i in range(units)]
    identity = EmbedderIdentity(embedder.provider, embedder.model, embedder.dimensions)
    queries = [f"what did {p} decide about {j}" for p in PEOPLE for j in PROJECTS[:4]]
    queries += [f"why is {j} slow with {t}" for j in PROJECTS for t in TOOLS[:3]]
    qvecs = [embedder.embed_query(q) for q in queries]
    tiled = [texts[i] for i in first.tolist()]
    tiled[: len(texts)] = texts
    words = np.random.default_rng(5).choice(len(WORDS), size=(units, 30))
    diverse = texts + [" ".join(WORDS[w] for w in row) for row in words[len(texts) :]]
    variants = {
        f"tiled texts (each note text ~{units // len(texts)}x: worst case for BM25)": tiled,
        f"{len(texts)} note texts + random-word texts": diverse,
    }
    for number, (label, unit_texts) in enumerate(variants.items()):
        with SqliteStore.open(tmp / f"real{number}.db") as store:
            build(store, identity, unit_texts, vectors, kinds)
            started = time.perf_counter()
            store.vector_search(qvecs[0], list(SOURCES), "block", 40)
            load_ms = (time.perf_counter() - started) * 1000
            print(f"[real] {label}: first vector search (loads the vectors) {load_ms:.0f} ms")
            if number == 0:
                report_vectors(store, vectors, kinds, qvecs)
            report_search(store, embedder, queries, label)


def report_vectors(
    store: SqliteStore, vectors: np.ndarray, kinds: list[str], qvecs: list[np.ndarray]
) -> None:
    report_recall(store, vectors, kinds, qvecs)
    for kind, limit in (("block", 40), ("chunk", 40), ("block", 10)):
        p50, p95 = _percentiles(
            lambda n, k=kind, m=limit: store.vector_search(  # type: ignore[misc]
                qvecs[n % len(qvecs)], list(SOURCES), k, m
            ),
            2 * len(qvecs),
        )
        print(
            f"[real] vector_search alone ({kind}s, k={limit}): p50 {p50:.2f} ms, p95 {p95:.2f} ms"
        )
    p50, p95 = _percentiles(
        lambda n: store.vector_search(qvecs[n % len(qvecs)], ["agent:a"], "block", 40),
        2 * len(qvecs),
    )
    print(
        f"[real] vector_search alone (blocks, 1 of 2 sources, k=40): p50 {p50:.2f} ms, "
        f"p95 {p95:.2f} ms" + _cpu_note()
    )
    held = int(store.stats().extra["vector_memory_bytes"])  # type: ignore[call-overload]
    print(f"[real] vectors in memory {held / 2**20:.0f} MiB; peak RSS so far {_rss_mb():.0f} MiB")


def report_search(store: SqliteStore, embedder: Embedder, queries: list[str], label: str) -> None:
    options = SearchOptions()
    both = list(SOURCES)
    timings = {
        "memdir.search.search incl. query embedding": lambda n: search(
            store, embedder, queries[n % len(queries)], sources=both, options=options
        ),
        "of which query embedding": lambda n: embedder.embed_query(queries[n % len(queries)]),
        "of which keyword_search (blocks + chunks, one pass)": lambda n: store.keyword_search(
            keyword_query(queries[n % len(queries)], options.max_terms),
            both,
            ("block", "chunk"),
            options.candidates,
        ),
    }
    for name, fn in timings.items():
        p50, p95 = _percentiles(fn, 2 * len(queries))
        print(f"[real] {label}: {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms" + _cpu_note())


def report_recall(
    store: SqliteStore, vectors: np.ndarray, kinds: list[str], qvecs: list[np.ndarray]
) -> None:
    """Recall@k of the store's (quantized) search against exact cosine, per k."""
    blocks = np.array([k == "block" for k in kinds])
    for k in (10, 40):
        hits = []
        for q in qvecs:
            scores = np.where(blocks, vectors @ q, -np.inf)
            exact = set((np.argpartition(-scores, k)[:k] + 1).tolist())
            got = {s.unit_id for s in store.vector_search(q, list(SOURCES), "block", k)}
            hits.append(len(exact & got) / k)
        print(f"[real] recall@{k} vs exact: mean {np.mean(hits):.3f}, min {np.min(hits):.2f}")


def main(units: int, dims: int, real: int, random_vectors: bool = True) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if random_vectors:
            random_part(units, dims, Path(tmp))
        if real > 0:
            realistic_part(units, real, Path(tmp))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--real-only"]
    main(
        int(args[0]) if len(args) > 0 else 100_000,
        int(args[1]) if len(args) > 1 else 384,
        int(args[2]) if len(args) > 2 else 3_000,
        random_vectors="--real-only" not in sys.argv[1:],
    )
