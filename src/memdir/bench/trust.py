"""Can a search tell a hit from a miss? LoCoMo questions with and without an answer.

The abstention protocol (``../shared/bench/locomo_trust.py`` is the reference): each
conversation's daily notes (``locomo.write_notes``) are asked the conversation's own
questions (answerable) and the next conversation's questions (unanswerable: other
people, other lives), through ``Memory.search`` with the default settings. Reported:
the AUROC of the top score separating the two, the share of unanswerable queries that
return no hit (``null_empty``), the share of answerable ones that return none
(``answerable_empty``) and the budgeted evidence recall of the answerable ones.

:func:`fit_calibration` fits ``memdir.search.calibration``'s constants on the evidence
the same run records (logistic regression, with leave-one-conversation-out figures).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memdir.bench.locomo import iter_questions, score_hits, write_notes
from memdir.search.calibration import Calibration
from memdir.search.results import SearchResults

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Asked:
    """One question asked of one conversation's memory, and what search answered."""

    conversation: int
    answerable: bool
    top: float  # the top hit's score (0 when nothing came back)
    hits: int
    cosine: float | None
    keyword: float | None
    recall: tuple[float, ...] = ()  # per budget, answerable questions only


def ask_all(
    data_path: str | Path,
    *,
    k: int = 20,
    budgets: Sequence[int] = (256, 1024),
    min_score: float | None = None,
    conversations: Sequence[int] | None = None,
    progress: Progress | None = None,
) -> tuple[list[Asked], list[float]]:
    """Every answerable and unanswerable question of the protocol, and search latencies.

    ``min_score`` None keeps the configured default (the protocol); 0 records every
    query's evidence for a calibration fit.
    """
    from memdir.memory import Memory

    data = json.loads(Path(data_path).read_text(encoding="utf-8"))
    chosen = list(conversations) if conversations is not None else list(range(len(data)))
    asked: list[Asked] = []
    latencies: list[float] = []
    for done, i in enumerate(chosen):
        other = data[chosen[(done + 1) % len(chosen)]]
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            files, where = write_notes(data[i], home)
            with Memory.open(home) as memory:
                memory.sync()
                for answerable, sample in ((True, data[i]), (False, other)):
                    for question, _category, evidence in iter_questions(sample):
                        t0 = time.perf_counter()
                        results = memory.search(question, max_results=k, min_score=min_score)
                        latencies.append(time.perf_counter() - t0)
                        spans = [(h.path, h.start_line, h.end_line) for h in results.hits]
                        recall = [score_hits(spans, files, where, evidence, b) for b in budgets]
                        asked.append(_asked(i, answerable, results, recall if answerable else []))
        if progress is not None:
            progress(done + 1, len(chosen))
    return asked, latencies


def _asked(
    conversation: int, answerable: bool, results: SearchResults, recall: Sequence[float]
) -> Asked:
    return Asked(
        conversation=conversation,
        answerable=answerable,
        top=max((hit.score for hit in results.hits), default=0.0),
        hits=len(results.hits),
        cosine=results.evidence.cosine,
        keyword=results.evidence.keyword,
        recall=tuple(recall),
    )


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    if not positives or not negatives:
        return float("nan")
    pos = np.asarray(positives, dtype=np.float64)
    neg = np.sort(np.asarray(negatives, dtype=np.float64))
    below = np.searchsorted(neg, pos, side="left")
    ties = np.searchsorted(neg, pos, side="right") - below
    return float((below + 0.5 * ties).sum() / (len(pos) * len(neg)))


def summarise_trust(
    asked: Sequence[Asked], latencies: Sequence[float], budgets: Sequence[int]
) -> dict[str, Any]:
    """The reference script's figures."""
    pos = [a for a in asked if a.answerable]
    neg = [a for a in asked if not a.answerable]
    out: dict[str, Any] = {"answerable": len(pos), "unanswerable": len(neg)}
    for index, budget in enumerate(budgets):
        values = [a.recall[index] for a in pos]
        out[f"R@{budget}tok"] = round(statistics.mean(values), 3) if values else 0.0
    out["null_empty"] = round(sum(a.hits == 0 for a in neg) / max(len(neg), 1), 3)
    out["answerable_empty"] = round(sum(a.hits == 0 for a in pos) / max(len(pos), 1), 3)
    out["auroc"] = round(auroc([a.top for a in pos], [a.top for a in neg]), 3)
    out["search_ms_p50"] = round(statistics.median(latencies or [0.0]) * 1000, 1)
    return out


def run_trust(
    data_path: str | Path,
    *,
    k: int = 20,
    budgets: Sequence[int] = (256, 1024),
    conversations: Sequence[int] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The abstention figures with memdir's default settings."""
    asked, latencies = ask_all(
        data_path, k=k, budgets=budgets, conversations=conversations, progress=progress
    )
    return summarise_trust(asked, latencies, budgets)


# -- calibration ------------------------------------------------------------------------------


def _logistic_fit(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Weights (then bias) of a logistic regression by Newton's method (tiny ridge)."""
    design = np.hstack([x, np.ones((len(x), 1))])
    weights = np.zeros(design.shape[1])
    ridge = 1e-4 * np.eye(len(weights))
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ weights, -500, 500)))
        gradient = design.T @ (p - y) + ridge @ weights
        hessian = (design.T * (p * (1.0 - p))) @ design + ridge
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return weights


def _as_calibration(weights: np.ndarray[Any, Any], columns: Sequence[str]) -> Calibration:
    slope = float(weights[:-1].sum())
    cosine_weight = (
        float(weights[0]) / slope
        if columns == ("cosine", "keyword")
        else float(columns == ("cosine",))
    )
    return Calibration(
        cosine_weight=round(cosine_weight, 3),
        midpoint=round(-float(weights[-1]) / slope, 4),
        slope=round(slope, 2),
    )


MIXES: dict[str, tuple[str, ...]] = {
    "hybrid": ("cosine", "keyword"),
    "vector": ("cosine",),
    "keyword": ("keyword",),
}


def fit_calibration(asked: Sequence[Asked]) -> dict[str, Any]:
    """Fit each evidence mix; report its constants and how well a fit on the other
    conversations separates each conversation's queries (leave one out)."""
    y = np.array([a.answerable for a in asked], dtype=np.float64)
    groups = np.array([a.conversation for a in asked])
    out: dict[str, Any] = {}
    for name, columns in MIXES.items():
        if any(getattr(a, c) is None for a in asked for c in columns):
            continue  # the run did not measure this evidence (no embedder, no coverage)
        x = np.array([[getattr(a, c) for c in columns] for a in asked], dtype=np.float64)
        fitted = _as_calibration(_logistic_fit(x, y), columns)
        held = np.zeros(len(asked))
        for group in np.unique(groups):
            mine = groups == group
            if len(np.unique(y[~mine])) < 2:
                continue
            part = _as_calibration(_logistic_fit(x[~mine], y[~mine]), columns)
            held[mine] = [part.confidence(*_evidence(a, columns)) for a in np.asarray(asked)[mine]]
        pos, neg = held[y == 1], held[y == 0]
        rows = {
            f"min_score {t:g}": {
                "null_empty": round(float((neg < t).mean()), 3),
                "answerable_empty": round(float((pos < t).mean()), 3),
            }
            for t in (0.05, 0.1, 0.2, 0.3, 0.5)
        }
        out[name] = {
            "calibration": asdict(fitted),
            "memdir.toml": (
                f"[search]\ncalibration_cosine_weight = {fitted.cosine_weight}\n"
                f"calibration_midpoint = {fitted.midpoint}\ncalibration_slope = {fitted.slope}"
            ),
            "held_out_auroc": round(auroc(list(pos), list(neg)), 4),
            **rows,
        }
    return out


def _evidence(asked: Asked, columns: Sequence[str]) -> tuple[float | None, float | None]:
    cosine = asked.cosine if "cosine" in columns else None
    keyword = asked.keyword if "keyword" in columns else None
    return cosine, keyword


def run_calibration(
    data_path: str | Path,
    *,
    conversations: Sequence[int] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Ask the protocol's questions with no score floor and fit the calibrations."""
    asked, _ = ask_all(data_path, min_score=0.0, conversations=conversations, progress=progress)
    return fit_calibration(asked)
