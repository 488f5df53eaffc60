"""LoCoMo evidence recall under a context budget (the reference protocol, in-process).

Each conversation is written as memdir daily notes: one file per session date,
``memory/YYYY-MM-DD.md``, a ``## Session N, <date time>`` heading per session and
one bullet per turn, ``- Speaker: text [shares <caption>]``. We remember which
line holds which dialog id. A retriever returns hits ``(path, start_line,
end_line)`` in rank order; hits are read in order and their lines counted
against a budget of B tokens (``ceil((chars + 1) / 4)`` per line). An evidence
turn is found when its line was read within budget. Questions: categories 1-4
with evidence (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop).

This follows ``locomo_budget.py`` (the reference script) line for line in what
it measures; the data path is an argument and the data is never copied.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memdir.progress import Progress, ProgressLines, ProgressUpdate

Span = tuple[str, int, int]
SearchFn = Callable[[str], list[Span]]
RetrieverFactory = Callable[[Path, int], SearchFn]
"""Given a home (notes under ``home/workspace``) and ``k``, return a search function."""
NoteFiles = dict[str, list[str]]
LineMap = dict[tuple[str, int], str]

CATEGORIES = (1, 2, 3, 4)
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_\d+")


def line_tokens(line: str) -> int:
    """The protocol's token estimate of one line, newline included."""
    return math.ceil((len(line) + 1) / 4)


def parse_session_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def write_notes(
    sample: Mapping[str, Any], home: Path, folder: str = "memory"
) -> tuple[NoteFiles, LineMap]:
    """Write one conversation as daily notes (``<folder>/YYYY-MM-DD.md``); return the file
    lines and line -> dia_id."""
    conversation = sample["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in conversation if _SESSION.fullmatch(k))
    files: NoteFiles = {}
    where: LineMap = {}
    for n in numbers:
        stamp = conversation[f"session_{n}_date_time"]
        moment = parse_session_time(stamp)
        rel = f"{folder}/{moment:%Y-%m-%d}.md"
        lines = files.setdefault(rel, [f"# {moment:%Y-%m-%d}", ""])
        if len(lines) > 2:
            lines.append("")
        lines.append(f"## Session {n}, {stamp}")
        lines.append("")
        for turn in conversation[f"session_{n}"]:
            text = turn["text"].replace("\n", " ")
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            lines.append(f"- {turn['speaker']}: {text}")
            where[(rel, len(lines))] = turn["dia_id"]
    for rel, lines in files.items():
        path = home / "workspace" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return files, where


def iter_questions(sample: Mapping[str, Any]) -> Iterator[tuple[str, int, set[str]]]:
    """Questions of categories 1-4 that cite evidence: (question, category, dia_ids)."""
    for qa in sample["qa"]:
        if qa.get("category") not in CATEGORIES:
            continue
        evidence = {
            f"D{a}:{int(b)}" for e in qa.get("evidence", []) for a, b in _EVIDENCE.findall(e)
        }
        if evidence:
            yield qa["question"], qa["category"], evidence


def score_hits(
    hits: Sequence[Span], files: NoteFiles, where: LineMap, evidence: set[str], budget: int
) -> float:
    """Share of evidence turns read, in hit order, before the token budget runs out."""
    found: set[str] = set()
    used = 0
    for rel, start, end in hits:
        for number in range(start, end + 1):
            lines = files.get(rel)
            if lines is None or number > len(lines):
                continue
            cost = line_tokens(lines[number - 1])
            if used + cost > budget:
                return len(found & evidence) / len(evidence)
            used += cost
            if (rel, number) in where:
                found.add(where[(rel, number)])
    return len(found & evidence) / len(evidence)


def resolve_retriever(
    retriever: str | RetrieverFactory, open_store: Callable[[], Any] | None = None
) -> tuple[str, RetrieverFactory]:
    """A retriever name (``memdir``, ``fts5-turn``, ``fts5-chunk``) or a factory;
    ``open_store`` gives ``memdir`` an empty index per conversation (default SQLite)."""
    if not isinstance(retriever, str):
        return getattr(retriever, "__name__", "custom"), retriever
    from memdir.bench.baselines import fts_chunk_retriever, fts_turn_retriever

    if retriever == "fts5-turn":
        return retriever, fts_turn_retriever
    if retriever == "fts5-chunk":
        return retriever, fts_chunk_retriever
    if retriever == "memdir":
        from memdir.bench.workspace import memdir_retriever

        return retriever, memdir_retriever(open_store=open_store)
    raise ValueError(f"unknown retriever {retriever!r}; use memdir, fts5-turn or fts5-chunk")


def run_locomo(
    data_path: str | Path,
    budgets: Sequence[int] = (256, 1024),
    k: int = 20,
    retriever: str | RetrieverFactory = "memdir",
    progress: Progress | None = None,
    conversations: Sequence[int] | None = None,
    open_store: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """Run the protocol over the file's conversations; return the reference's figures.

    ``open_store`` (an empty index per conversation) runs ``memdir`` on another store,
    such as PostgreSQL (``memdir.bench.workspace.postgres_index``).
    """
    data = json.loads(Path(data_path).read_text(encoding="utf-8"))
    name, factory = resolve_retriever(retriever, open_store)
    chosen = list(conversations) if conversations is not None else list(range(len(data)))
    results: dict[tuple[int, int | str], list[float]] = defaultdict(list)
    latencies: list[float] = []
    index_s = 0.0
    asked, to_ask = 0, sum(len(list(iter_questions(data[i]))) for i in chosen)
    report = progress or (lambda update: None)
    for done, i in enumerate(chosen):
        sample = data[i]
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            files, where = write_notes(sample, home)
            report(ProgressUpdate("indexing conversations", done, len(chosen), "conversations"))
            t0 = time.perf_counter()
            search_fn = factory(home, k)
            index_s += time.perf_counter() - t0
            report(ProgressUpdate("indexing conversations", done + 1, len(chosen), "conversations"))
            for question, category, evidence in iter_questions(sample):
                t0 = time.perf_counter()
                hits = search_fn(question)
                latencies.append(time.perf_counter() - t0)
                for budget in budgets:
                    value = score_hits(hits, files, where, evidence, budget)
                    results[(budget, category)].append(value)
                    results[(budget, "all")].append(value)
                asked += 1
                report(ProgressUpdate("questions", asked, to_ask, "questions"))
    return summarise(name, budgets, results, latencies, index_s)


def summarise(
    name: str,
    budgets: Sequence[int],
    results: Mapping[tuple[int, int | str], list[float]],
    latencies: list[float],
    index_s: float,
) -> dict[str, Any]:
    """The reference script's output dict."""
    ordered = sorted(latencies) or [0.0]
    out: dict[str, Any] = {
        "retriever": name,
        "n": len(results.get((budgets[0], "all"), [])),
        "index_s": round(index_s, 2),
        "search_ms_p50": round(statistics.median(ordered) * 1000, 2),
        "search_ms_p95": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }
    for budget in budgets:
        scores = results.get((budget, "all"), [])
        out[f"R@{budget}tok"] = round(statistics.mean(scores), 3) if scores else 0.0
        out[f"R@{budget}tok_by_cat"] = {
            c: round(statistics.mean(results[(budget, c)]), 3)
            for c in CATEGORIES
            if results.get((budget, c))
        }
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m memdir.bench.locomo DATA --retriever memdir``: print the figures as JSON."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="LoCoMo evidence recall under a token budget")
    parser.add_argument("data")
    parser.add_argument("--retriever", default="memdir")
    parser.add_argument("--budgets", default="256,1024")
    parser.add_argument("--k", type=int, default=20)
    args = parser.parse_args(argv)
    out = run_locomo(
        args.data,
        budgets=[int(b) for b in args.budgets.split(",")],
        k=args.k,
        retriever=args.retriever,
        progress=ProgressLines("locomo", sys.stderr),
    )
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
