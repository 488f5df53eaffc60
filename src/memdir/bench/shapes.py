"""Search on the shapes of memory people keep: small homes, coding transcripts, mixed workspaces.

A suite folder holds *homes*: ``<part>/<shape>/<home>/workspace/`` (the Markdown files of one
workspace) and ``questions.jsonl`` (one question per line: ``id``, ``question``, ``kind`` and,
for answerable kinds, ``evidence``: ``{"path", "text"}`` pairs naming the lines that answer;
docs/benchmarks.md has the format). Kinds: ``paraphrase`` (shares no content word with its
answer), ``lexical`` (shares some), and three unanswerable ones: ``unanswerable`` (the topic is
absent), ``unanswerable_overlap`` (shares common words with stored lines) and
``unanswerable_near`` (memory holds something close, not the answer).

Each home is copied into a temporary memdir home, indexed (``Memory.sync``) and asked its
questions through ``Memory.search`` with the default settings (the floor off, so that the
top score is recorded). Reported per part and shape:

* ``first``: share of answerable questions whose first hit cites an evidence line
  (``first_paraphrase``, ``first_lexical`` by kind);
* ``answerable_empty``: share of answerable questions that get no hit at the default
  ``search.min_score``; ``unanswerable_empty`` the same for unanswerable ones (by kind too);
* ``auroc``: how well the top score separates answerable from unanswerable questions;
* ``R@<B>tok``: the share of evidence lines read when hits are read in rank order against a
  budget of B tokens (``ceil((chars + 1) / 4)`` per line, as the LoCoMo protocol counts);
* ``index_tokens_per_s``: the first index's speed (estimated tokens of the files over the
  seconds of the sync) and ``search_ms_p50``.

Baseline ``cosine``: every Markdown block (a list item with its continuation lines, a
paragraph; a whole message in a transcript) embedded whole by the same model and ranked by
cosine alone; its ``first``, ``auroc`` (top cosine) and ``R@<B>tok``.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memdir.bench.locomo import line_tokens, score_hits
from memdir.bench.trust import auroc
from memdir.embeddings.base import Embedder
from memdir.index.chunking import embedding_text
from memdir.index.markdown import scan_blocks
from memdir.progress import Progress, ProgressUpdate
from memdir.text import split_lines

ANSWERABLE = ("paraphrase", "lexical")
UNANSWERABLE = ("unanswerable", "unanswerable_overlap", "unanswerable_near")
SHAPES = ("small_home", "transcripts", "mixed")
BUDGETS: dict[str, tuple[int, ...]] = {
    "small_home": (64, 256),
    "transcripts": (512, 2048),
    "mixed": (256, 1024),
}
Span = tuple[str, int, int]  # path, first line, last line (1-based, inclusive)


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    kind: str
    evidence: tuple[tuple[str, int], ...]  # (path, line number) pairs

    @property
    def answerable(self) -> bool:
        return self.kind in ANSWERABLE


@dataclass(frozen=True)
class Home:
    part: str
    shape: str
    name: str
    folder: Path
    questions: tuple[Question, ...]

    @property
    def workspace(self) -> Path:
        return self.folder / "workspace"


@dataclass
class Answer:
    """What one retriever answered to one question."""

    question: Question
    spans: list[Span]
    top: float  # the top hit's score (a confidence for memdir, a cosine for the baseline)
    empty: bool  # no hit at the default floor
    seconds: float = 0.0
    every: list[Span] | None = None  # the hits with the floor off (None: ``spans``)

    @property
    def leading(self) -> list[Span]:
        """The first hit with the floor off."""
        return (self.spans if self.every is None else self.every)[:1]


@dataclass
class HomeRun:
    home: Home
    answers: dict[str, list[Answer]] = field(default_factory=dict)  # by retriever
    index_seconds: float = 0.0
    tokens: int = 0


def load_home(folder: Path, part: str, shape: str) -> Home:
    """Read one home; evidence texts become line numbers (each must name exactly one line)."""
    questions = []
    lines_of: dict[str, list[str]] = {}
    for raw in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        item = json.loads(raw)
        evidence = []
        for ev in item.get("evidence", []):
            path = ev["path"]
            if path not in lines_of:
                lines_of[path] = split_lines((folder / "workspace" / path).read_text("utf-8"))
            found = [n for n, line in enumerate(lines_of[path], 1) if ev["text"] in line]
            if len(found) != 1:
                raise ValueError(
                    f"{folder.name}/{item['id']}: evidence {ev['text']!r} is in {len(found)} "
                    f"lines of {path}; it must name exactly one"
                )
            evidence.append((path, found[0]))
        questions.append(Question(item["id"], item["question"], item["kind"], tuple(evidence)))
    return Home(part, shape, folder.name, folder, tuple(questions))


def load_suite(root: Path, parts: Sequence[str] = ("dev", "heldout")) -> list[Home]:
    """Every home under ``root/<part>/<shape>/<home>/`` for the given parts."""
    homes = []
    for part in parts:
        for shape in SHAPES:
            for folder in sorted((root / part / shape).glob("*/questions.jsonl")):
                homes.append(load_home(folder.parent, part, shape))
    return homes


def workspace_files(workspace: Path) -> dict[str, list[str]]:
    """The Markdown files of a workspace by relative path, as lines."""
    return {
        path.relative_to(workspace).as_posix(): split_lines(path.read_text(encoding="utf-8"))
        for path in sorted(workspace.rglob("*.md"))
    }


def budget_recall(
    spans: Sequence[Span], files: dict[str, list[str]], q: Question, budget: int
) -> float:
    """Share of ``q``'s evidence lines read within ``budget`` tokens, hits read in order
    (the LoCoMo protocol's ``score_hits``, each evidence line its own key)."""
    where = {line: f"{line[0]}:{line[1]}" for line in q.evidence}
    return score_hits(spans, files, where, set(where.values()), budget)


def cites_evidence(span: Span, q: Question) -> bool:
    path, start, end = span
    return any(p == path and start <= n <= end for p, n in q.evidence)


# -- retrievers -------------------------------------------------------------------------------


def ask_memdir(
    home: Home, embedder: Embedder | None, overrides: dict[str, dict[str, object]] | None
) -> tuple[list[Answer], float, int]:
    """Index ``home`` in a temporary memdir home and ask every question; also returns the
    index seconds and the estimated tokens indexed."""
    from memdir.memory import Memory

    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(home.workspace, Path(tmp) / "workspace")
        kwargs: dict[str, Any] = {"overrides": overrides or {}}
        if embedder is not None:
            kwargs["embedder"] = embedder
        with Memory.open(tmp, **kwargs) as memory:
            files = workspace_files(Path(tmp) / "workspace")
            tokens = sum(line_tokens(line) for lines in files.values() for line in lines)
            t0 = time.perf_counter()
            memory.sync()
            seconds = time.perf_counter() - t0
            floor = memory.settings.search.min_score
            answers = []
            for q in home.questions:
                t0 = time.perf_counter()
                results = memory.search(q.question, max_results=20, min_score=0.0)
                elapsed = time.perf_counter() - t0
                # what an agent reads with the default floor: the hits that reach it
                spans = [
                    (h.path, h.start_line, h.end_line) for h in results.hits if h.score >= floor
                ]
                top = results.hits[0].score if results.hits else 0.0
                every = [(h.path, h.start_line, h.end_line) for h in results.hits]
                answers.append(Answer(q, spans, top, not spans, elapsed, every))
    return answers, seconds, tokens


_TOP_ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])[ \t]")


def message_blocks(files: dict[str, list[str]]) -> list[tuple[str, int, int, str]]:
    """The baseline's units, whole: a top-level list item with everything indented under
    it (a whole message of a transcript, code and all), else each Markdown block."""
    out: list[tuple[str, int, int, str]] = []
    for path, lines in files.items():
        for block in scan_blocks(lines):
            if block.kind in ("heading", "rule", "front_matter"):
                continue
            start, end = block.start, block.end
            if out and out[-1][0] == path and start <= out[-1][2] - 1:
                continue  # already inside the message before
            if _TOP_ITEM.match(lines[start]):
                while end + 1 < len(lines) and (
                    not lines[end + 1].strip() or lines[end + 1][:1] in (" ", "\t")
                ):
                    end += 1
                while end > start and not lines[end].strip():
                    end -= 1
            text = "\n".join(lines[start : end + 1])
            out.append((path, start + 1, end + 1, embedding_text("block", (), text)))
    return out


def ask_cosine(home: Home, embedder: Embedder) -> list[Answer]:
    """The baseline: every block embedded whole, ranked by cosine alone."""
    blocks = message_blocks(workspace_files(home.workspace))
    matrix = embedder.embed_documents([text for *_, text in blocks])
    answers = []
    for q in home.questions:
        scores = matrix @ embedder.embed_query(q.question)
        order = np.argsort(-scores, kind="stable")[:20]
        spans = [blocks[i][:3] for i in order]
        answers.append(Answer(q, spans, float(scores[order[0]]), False))
    return answers


# -- figures ----------------------------------------------------------------------------------


def _share(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def summarise(runs: Sequence[HomeRun], retriever: str, budgets: Sequence[int]) -> dict[str, Any]:
    """The figures of one retriever over some homes (see the module docstring)."""
    answers = [(run, a) for run in runs for a in run.answers.get(retriever, [])]
    pos = [(run, a) for run, a in answers if a.question.answerable]
    neg = [a for _, a in answers if not a.question.answerable]
    out: dict[str, Any] = {"answerable": len(pos), "unanswerable": len(neg)}
    out["first"] = _share([any(cites_evidence(s, a.question) for s in a.leading) for _, a in pos])
    for kind in ANSWERABLE:
        flags = [
            any(cites_evidence(s, a.question) for s in a.leading)
            for _, a in pos
            if a.question.kind == kind
        ]
        out[f"first_{kind}"] = _share(flags)
    out["auroc"] = (
        round(auroc([a.top for _, a in pos], [a.top for a in neg]), 3) if pos and neg else None
    )
    if retriever == "memdir":
        out["answerable_empty"] = _share([a.empty for _, a in pos])
        out["unanswerable_empty"] = _share([a.empty for a in neg])
        for kind in UNANSWERABLE[1:]:
            out[f"{kind}_empty"] = _share([a.empty for a in neg if a.question.kind == kind])
    files_of = {id(run): workspace_files(run.home.workspace) for run in runs}
    for budget in budgets:
        values = [budget_recall(a.spans, files_of[id(run)], a.question, budget) for run, a in pos]
        out[f"R@{budget}tok"] = round(statistics.mean(values), 3) if values else None
        if retriever == "memdir":
            every = [
                budget_recall(a.every or [], files_of[id(run)], a.question, budget)
                for run, a in pos
            ]
            out[f"R@{budget}tok_floor_off"] = round(statistics.mean(every), 3) if every else None
    return out


def run_shapes(
    root: Path,
    *,
    parts: Sequence[str] = ("dev", "heldout"),
    shapes: Sequence[str] = SHAPES,
    embedder: Embedder | None = None,
    baseline: bool = True,
    overrides: dict[str, dict[str, object]] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Ask every home of the suite; figures per part and shape, for memdir and the baseline."""
    homes = [h for h in load_suite(root, parts) if h.shape in shapes]
    if not homes:
        raise FileNotFoundError(f"no homes under {root}/<part>/<shape>/*/questions.jsonl")
    if baseline and embedder is None:
        from memdir.embeddings.local import LocalEmbedder

        baseline_embedder: Embedder = LocalEmbedder()
    else:
        baseline_embedder = embedder  # type: ignore[assignment]
    runs: list[HomeRun] = []
    for done, home in enumerate(homes):
        run = HomeRun(home)
        run.answers["memdir"], run.index_seconds, run.tokens = ask_memdir(home, embedder, overrides)
        if baseline and baseline_embedder is not None:
            run.answers["cosine"] = ask_cosine(home, baseline_embedder)
        runs.append(run)
        if progress is not None:
            progress(ProgressUpdate("homes", done + 1, len(homes), "homes", home.name))
    return {
        part: {
            shape: figures(part_runs, shape)
            for shape in shapes
            if (part_runs := [r for r in runs if r.home.part == part and r.home.shape == shape])
        }
        for part in parts
    }


def figures(runs: Sequence[HomeRun], shape: str) -> dict[str, Any]:
    budgets = BUDGETS[shape]
    seconds = sum(r.index_seconds for r in runs)
    tokens = sum(r.tokens for r in runs)
    latencies = [a.seconds for r in runs for a in r.answers["memdir"]]
    out: dict[str, Any] = {
        "homes": len(runs),
        "memdir": summarise(runs, "memdir", budgets),
        "index_tokens_per_s": round(tokens / seconds) if seconds else None,
        "search_ms_p50": round(statistics.median(latencies) * 1000, 1) if latencies else None,
    }
    if any("cosine" in r.answers for r in runs):
        out["cosine"] = summarise(runs, "cosine", budgets)
    return out


ROWS = (
    ("first", "right line first"),
    ("first_paraphrase", "  paraphrased questions"),
    ("first_lexical", "  questions sharing words"),
    ("answerable_empty", "answerable, no hit"),
    ("unanswerable_empty", "unanswerable, no hit"),
    ("unanswerable_overlap_empty", "  sharing common words"),
    ("unanswerable_near_empty", "  close but not the answer"),
    ("auroc", "AUROC of the top score"),
)


def format_table(result: dict[str, Any]) -> str:
    """The figures as one Markdown table per part and shape (memdir beside plain cosine)."""
    out: list[str] = []
    for part, by_shape in result.items():
        for shape, fig in by_shape.items():
            mine, base = fig["memdir"], fig.get("cosine", {})
            out.append(
                f"### {part} / {shape}: {fig['homes']} homes, {mine['answerable']} answerable "
                f"and {mine['unanswerable']} unanswerable questions"
            )
            out.append("")
            out.append("| measure | memdir | plain cosine |")
            out.append("| --- | --- | --- |")
            budgets = [key for key in mine if key.startswith("R@") and key.endswith("tok")]
            recall_rows = [
                row
                for b in budgets
                for row in (
                    (b, f"recall within {b[2:]}"),
                    (f"{b}_floor_off", f"  with the floor off ({b[2:]})"),
                )
            ]
            for key, label in (*ROWS, *recall_rows):
                if mine.get(key) is None and base.get(key) is None:
                    continue
                out.append(f"| {label} | {_cell(mine.get(key))} | {_cell(base.get(key))} |")
            out.append(
                f"| first index, tokens/s | {fig['index_tokens_per_s']} | |\n"
                f"| search p50, ms | {fig['search_ms_p50']} | |"
            )
            out.append("")
    return "\n".join(out)


def _cell(value: object) -> str:
    return "" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
