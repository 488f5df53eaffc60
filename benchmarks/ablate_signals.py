"""Benchmark: what each ranking signal adds, per memory shape and on LoCoMo (one off at a time).

Run: .venv/bin/python benchmarks/ablate_signals.py shapes [--part dev] [--shape small_home]
     .venv/bin/python benchmarks/ablate_signals.py locomo DATA.json

Each home (or LoCoMo conversation) is indexed once with the bundled model; every question
is then asked under each variant of the default ``SearchOptions`` (``VARIANTS``: neighbours,
answers, chunk inheritance, feedback, its coherence scaling, attribution, each turned off),
with the default floor where the protocol has one. ``shapes`` prints, per shape, what
``memdir bench shapes`` prints for memdir; ``locomo`` prints what ``locomo_budget.py`` and
``locomo_trust.py`` print (recall within 256 and 1024 tokens, AUROC of the top score, the
share of unanswerable and answerable questions with no hit; unanswerable: the next
conversation's questions). Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from memdir.bench import shapes
from memdir.bench.locomo import iter_questions, score_hits, write_notes
from memdir.bench.trust import auroc
from memdir.memory import Memory, indexing
from memdir.search.hybrid import search
from memdir.search.results import SearchOptions, SearchResults
from memdir.workspace.sources import cite_path

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "no neighbours": {"neighbour_share": 0.0},
    "no answers": {"answer_share": 0.0},
    "no neighbours, no answers": {"neighbour_share": 0.0, "answer_share": 0.0},
    "no chunk inheritance": {"chunk_share": 0.0},
    "no feedback": {"feedback": 0.0},
    "feedback not scaled by coherence": {"feedback_coherence": False},
    "no attribution": {"attribution_demote": 0.0},
}


def ask(memory: Memory, question: str, options: SearchOptions) -> SearchResults:
    """``Memory.search`` over the index as it is, with ``options`` instead of the settings'."""
    results = search(
        memory.store,
        memory.embedder,
        question,
        sources=indexing.sources(memory.layout, memory.agent_id, "agent"),
        options=options,
        facts=memory.stores.facts_reader(memory.source),
    )
    return replace(
        results,
        hits=tuple(replace(h, path=cite_path(h.source, h.path, memory.source)) for h in results),
    )


def variants(memory: Memory, k: int, min_score: float | None) -> dict[str, SearchOptions]:
    base = indexing.search_options(memory.settings.search, k, min_score, False)
    return {name: replace(base, **changes) for name, changes in VARIANTS.items()}


def run_shapes(part: str, only: list[str]) -> dict[str, Any]:
    root = Path(__file__).parent / "shapes"
    homes = [h for h in shapes.load_suite(root, (part,)) if not only or h.shape in only]
    runs: dict[str, list[shapes.HomeRun]] = {name: [] for name in VARIANTS}
    for home in homes:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(home.workspace, Path(tmp) / "workspace")
            with Memory.open(tmp) as memory:
                memory.sync()
                floor = memory.settings.search.min_score
                for name, options in variants(memory, 20, 0.0).items():
                    answers = []
                    for q in home.questions:
                        hits = ask(memory, q.question, options).hits
                        every = [(h.path, h.start_line, h.end_line) for h in hits]
                        kept = [
                            (h.path, h.start_line, h.end_line) for h in hits if h.score >= floor
                        ]
                        top = hits[0].score if hits else 0.0
                        answers.append(shapes.Answer(q, kept, top, not kept, 0.0, every))
                    run = shapes.HomeRun(home)
                    run.answers["memdir"] = answers
                    runs[name].append(run)
    return {
        name: {
            shape: shapes.summarise(chosen, "memdir", shapes.BUDGETS[shape])
            for shape in shapes.SHAPES
            if (chosen := [r for r in home_runs if r.home.shape == shape])
        }
        for name, home_runs in runs.items()
    }


def run_locomo(data_path: Path) -> dict[str, Any]:
    data = json.loads(data_path.read_text(encoding="utf-8"))
    figures: dict[str, dict[str, list[float]]] = {
        name: {"r256": [], "r1024": [], "pos": [], "neg": []} for name in VARIANTS
    }
    for i, sample in enumerate(data):
        other = data[(i + 1) % len(data)]
        with tempfile.TemporaryDirectory() as tmp:
            files, where = write_notes(sample, Path(tmp))
            with Memory.open(tmp) as memory:
                memory.sync()
                for name, options in variants(memory, 20, None).items():
                    got = figures[name]
                    for question, _category, evidence in iter_questions(sample):
                        hits = ask(memory, question, options).hits
                        spans = [(h.path, h.start_line, h.end_line) for h in hits]
                        got["r256"].append(score_hits(spans, files, where, evidence, 256))
                        got["r1024"].append(score_hits(spans, files, where, evidence, 1024))
                        got["pos"].append(max((h.score for h in hits), default=0.0))
                    for question, _category, _evidence in iter_questions(other):
                        hits = ask(memory, question, options).hits
                        got["neg"].append(max((h.score for h in hits), default=0.0))
    return {
        name: {
            "R@256tok": round(statistics.mean(got["r256"]), 3),
            "R@1024tok": round(statistics.mean(got["r1024"]), 3),
            "auroc": round(auroc(got["pos"], got["neg"]), 3),
            "null_empty": round(sum(s == 0.0 for s in got["neg"]) / len(got["neg"]), 3),
            "answerable_empty": round(sum(s == 0.0 for s in got["pos"]) / len(got["pos"]), 3),
        }
        for name, got in figures.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="suite", required=True)
    shape_args = sub.add_parser("shapes", help="benchmarks/shapes, one part")
    shape_args.add_argument("--part", default="dev", choices=("dev", "heldout"))
    shape_args.add_argument("--shape", action="append", choices=shapes.SHAPES, default=[])
    locomo_args = sub.add_parser("locomo", help="a LoCoMo file (locomo10.json or a part of it)")
    locomo_args.add_argument("data", type=Path)
    args = parser.parse_args()
    shaped = args.suite == "shapes"
    result = run_shapes(args.part, args.shape) if shaped else run_locomo(args.data)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
