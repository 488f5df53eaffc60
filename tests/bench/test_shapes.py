"""The memory-shapes suite: homes load, evidence resolves to lines, figures add up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.bench.shapes import (
    Question,
    budget_recall,
    format_table,
    load_home,
    run_shapes,
)
from memdir.embeddings.base import HashEmbedder

NOTE = (
    "# 2026-03-02\n\n"
    "- My cat's name is Whiskerino\n"
    "- The office wifi network is called Hummingbird\n"
    "- We chose PostgreSQL 16 for the billing service\n"
)
QUESTIONS = [
    {"id": "q1", "question": "Whiskerino cat", "kind": "lexical",
     "evidence": [{"path": "memory/2026-03-02.md", "text": "Whiskerino"}]},
    {"id": "q2", "question": "PostgreSQL billing service", "kind": "lexical",
     "evidence": [{"path": "memory/2026-03-02.md", "text": "PostgreSQL 16"}]},
    {"id": "q3", "question": "zebra quagga okapi", "kind": "unanswerable", "evidence": []},
]  # fmt: skip


def write_home(root: Path, questions: list[dict[str, object]]) -> Path:
    home = root / "dev" / "small_home" / "tiny"
    (home / "workspace" / "memory").mkdir(parents=True)
    (home / "workspace" / "memory" / "2026-03-02.md").write_text(NOTE, encoding="utf-8")
    lines = "\n".join(json.dumps(q) for q in questions)
    (home / "questions.jsonl").write_text(lines + "\n", encoding="utf-8")
    return home


def test_evidence_resolves_to_the_one_line_that_holds_it(tmp_path: Path) -> None:
    home = load_home(write_home(tmp_path, QUESTIONS), "dev", "small_home")
    assert [q.evidence for q in home.questions] == [
        (("memory/2026-03-02.md", 3),),
        (("memory/2026-03-02.md", 5),),
        (),
    ]
    assert [q.answerable for q in home.questions] == [True, True, False]


def test_evidence_in_two_lines_is_refused(tmp_path: Path) -> None:
    bad = [{"id": "b", "question": "x", "kind": "lexical",
            "evidence": [{"path": "memory/2026-03-02.md", "text": "- "}]}]  # fmt: skip
    with pytest.raises(ValueError, match="is in 3 lines"):
        load_home(write_home(tmp_path, bad), "dev", "small_home")


def test_budget_recall_counts_lines_read_in_order() -> None:
    files = {"a.md": ["x" * 15, "y" * 15, "z" * 15]}  # 4 tokens a line
    q = Question("q", "?", "lexical", (("a.md", 3),))
    assert budget_recall([("a.md", 3, 3)], files, q, 4) == 1.0
    assert budget_recall([("a.md", 1, 3)], files, q, 8) == 0.0
    assert budget_recall([("a.md", 1, 3)], files, q, 12) == 1.0


def test_suite_figures_for_memdir_and_the_baseline(tmp_path: Path) -> None:
    write_home(tmp_path, QUESTIONS)
    result = run_shapes(tmp_path, parts=["dev"], embedder=HashEmbedder(64))
    figures = result["dev"]["small_home"]
    mine = figures["memdir"]
    assert (mine["answerable"], mine["unanswerable"]) == (2, 1)
    assert mine["first"] == 1.0  # both lexical questions name their line's rare words
    assert 0.0 <= mine["answerable_empty"] <= 1.0
    assert figures["cosine"]["answerable"] == 2
    assert figures["index_tokens_per_s"] > 0
    table = format_table(result)
    assert "### dev / small_home: 1 homes, 2 answerable and 1 unanswerable questions" in table
    assert "| right line first | 1.000 |" in table
