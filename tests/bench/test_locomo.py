"""The LoCoMo harness on a tiny synthetic conversation in the LoCoMo format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pgserver_support import TestServer
from typer.testing import CliRunner

from memdir.bench.locomo import iter_questions, run_locomo, score_hits, write_notes
from memdir.bench.workspace import memdir_retriever
from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.cli import app
from memdir.progress import ProgressUpdate

TURNS_1 = [
    ("Ana", "Hi Ben! I finally adopted a puppy, her name is Biscuit."),
    ("Ben", "Congrats! What breed is she?"),
    ("Ana", "A golden retriever, she loves chasing tennis balls."),
    ("Ben", "I started learning the cello last month."),
]
TURNS_2 = [
    ("Ben", "My cello teacher says I am improving fast."),
    ("Ana", "Biscuit graduated from obedience school yesterday!"),
    ("Ben", "Amazing, I ran a half marathon in Lisbon on Sunday."),
]


def session(turns: list[tuple[str, str]], number: int) -> list[dict[str, str]]:
    return [
        {"speaker": who, "dia_id": f"D{number}:{i}", "text": text}
        for i, (who, text) in enumerate(turns, 1)
    ]


SAMPLE = {
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": session(TURNS_1, 1),
        "session_2_date_time": "10:15 am on 2 June, 2023",
        "session_2": session(TURNS_2, 2),
    },
    "qa": [
        {
            "question": "What is the name of Ana's puppy?",
            "answer": "Biscuit",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "Which instrument is Ben learning?",
            "answer": "cello",
            "evidence": ["D1:4", "D2:1"],
            "category": 1,
        },
        {
            "question": "Where did Ben run a half marathon?",
            "answer": "Lisbon",
            "evidence": ["D2:3"],
            "category": 4,
        },
        {
            "question": "When did Biscuit graduate?",
            "answer": "1 June 2023",
            "evidence": ["D2:2"],
            "category": 2,
        },
        {"question": "Is this adversarial?", "answer": "n/a", "evidence": ["D1:2"], "category": 5},
    ],
}


@pytest.fixture
def data_path(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    return path


def test_notes_layout(tmp_path: Path) -> None:
    files, where = write_notes(SAMPLE, tmp_path)
    assert sorted(files) == ["memory/2023-05-08.md", "memory/2023-06-02.md"]
    lines = files["memory/2023-05-08.md"]
    assert lines[:5] == ["# 2023-05-08", "", "## Session 1, 1:56 pm on 8 May, 2023", "", lines[4]]
    assert lines[4] == "- Ana: Hi Ben! I finally adopted a puppy, her name is Biscuit."
    assert where[("memory/2023-05-08.md", 5)] == "D1:1"
    on_disk = (tmp_path / "workspace/memory/2023-05-08.md").read_text(encoding="utf-8")
    assert on_disk == "\n".join(lines) + "\n"


def test_questions_skip_category_5() -> None:
    assert [c for _, c, _ in iter_questions(SAMPLE)] == [4, 1, 4, 2]


def test_score_hits_counts_budget_in_read_order(tmp_path: Path) -> None:
    files, where = write_notes(SAMPLE, tmp_path)
    rel = "memory/2023-05-08.md"
    assert score_hits([(rel, 5, 5)], files, where, {"D1:1"}, 256) == 1.0
    assert score_hits([(rel, 5, 5)], files, where, {"D1:1"}, 5) == 0.0
    assert score_hits([(rel, 1, 8), (rel, 5, 5)], files, where, {"D1:1", "D1:4"}, 1024) == 1.0
    assert score_hits([(rel, 6, 6)], files, where, {"D1:1", "D1:2"}, 256) == 0.5


def test_memdir_retriever_finds_easy_evidence(data_path: Path) -> None:
    out = run_locomo(data_path, retriever=memdir_retriever(HashEmbedder(64)), k=5)
    assert out["n"] == 4
    assert 0.0 <= out["R@256tok"] <= out["R@1024tok"] <= 1.0
    assert out["R@256tok"] >= 0.75
    assert set(out["R@256tok_by_cat"]) == {1, 2, 4}


def test_keyword_only_and_baselines_run(data_path: Path) -> None:
    seen: list[ProgressUpdate] = []
    keyword = run_locomo(
        data_path, retriever=memdir_retriever(embedder_name="none"), progress=seen.append
    )
    indexed = [(u.done, u.total) for u in seen if u.stage == "indexing conversations"]
    assert indexed == [(0, 1), (1, 1)]
    asked = [(u.done, u.total) for u in seen if u.stage == "questions"]
    assert asked == [(n, keyword["n"]) for n in range(1, keyword["n"] + 1)]
    assert keyword["R@1024tok"] > 0.5
    for name in ("fts5-turn", "fts5-chunk"):
        assert run_locomo(data_path, retriever=name)["R@1024tok"] > 0.5


def test_unknown_retriever(data_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown retriever"):
        run_locomo(data_path, retriever="grep")


@pytest.mark.slow
def test_cli_runs_memdir_on_postgres_with_the_figures_of_sqlite(
    data_path: Path, pg_server: TestServer
) -> None:
    """Same notes, same search, same BM25: the figures of both stores agree."""
    base = ["bench", "locomo", "--data", str(data_path), "--k", "5"]
    on_sqlite = CliRunner().invoke(app, base)
    on_postgres = CliRunner().invoke(app, [*base, "--backend", "postgres", "--dsn", pg_server.dsn])
    assert on_postgres.exit_code == 0, on_postgres.output
    lite, pg = json.loads(on_sqlite.stdout), json.loads(on_postgres.stdout)
    assert pg["backend"] == "postgres"
    for key in ("n", "R@256tok", "R@1024tok", "R@256tok_by_cat", "R@1024tok_by_cat"):
        assert pg[key] == lite[key], key


def test_cli_refuses_postgres_options_that_do_not_fit(data_path: Path) -> None:
    base = ["bench", "locomo", "--data", str(data_path)]
    for extra, message in (
        (["--backend", "mysql"], "unknown --backend 'mysql'"),
        (["--dsn", "postgresql://x"], "--dsn needs --backend postgres"),
        (["--backend", "postgres", "--retriever", "fts5-turn"], "drop --retriever"),
    ):
        refused = CliRunner().invoke(app, [*base, *extra])
        assert refused.exit_code == 2, extra
        assert message in refused.output
