"""The abstention benchmark and the calibration fit, on tiny conversations in LoCoMo's format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.bench.trust import Asked, auroc, fit_calibration, run_trust
from memdir.interfaces.cli import app

PETS = [
    ("Ana", "I finally adopted a puppy, her name is Biscuit."),
    ("Ben", "Congrats! What breed is she?"),
    ("Ana", "A golden retriever, she loves chasing tennis balls in the park."),
    ("Ben", "I started learning the cello last month."),
]
BOATS = [
    ("Cleo", "We repainted the hull of our sailboat with blue antifouling paint."),
    ("Dev", "Did you replace the mainsail as well?"),
    ("Cleo", "Yes, a new mainsail from a loft in Brittany, it arrived on Friday."),
    ("Dev", "My kayak club meets at the harbour every Sunday morning."),
]


def conversation(
    turns: list[tuple[str, str]], questions: list[tuple[str, str]]
) -> dict[str, object]:
    return {
        "conversation": {
            "speaker_a": turns[0][0],
            "speaker_b": turns[1][0],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": who, "dia_id": f"D1:{n}", "text": text}
                for n, (who, text) in enumerate(turns, 1)
            ],
        },
        "qa": [
            {"question": q, "answer": "x", "evidence": [ev], "category": 4} for q, ev in questions
        ],
    }


@pytest.fixture
def data_path(tmp_path: Path) -> Path:
    data = [
        conversation(
            PETS,
            [
                ("What is the name of Ana's puppy?", "D1:1"),
                ("Which instrument is Ben learning?", "D1:4"),
            ],
        ),
        conversation(
            BOATS,
            [
                ("What colour paint went on the hull?", "D1:1"),
                ("When does the kayak club meet?", "D1:4"),
            ],
        ),
    ]
    path = tmp_path / "two.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_auroc_counts_wins_and_half_ties() -> None:
    assert auroc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auroc([0.1], [0.9]) == 0.0
    assert auroc([0.5], [0.5]) == 0.5
    assert auroc([0.9, 0.3], [0.5]) == 0.5


def test_fit_recovers_a_separating_calibration() -> None:
    asked = [
        Asked(conversation=i % 3, answerable=a, top=0.0, hits=0, cosine=c, keyword=c / 2)
        for i, (a, c) in enumerate(
            [(True, 0.6 + j / 100) for j in range(20)] + [(False, 0.2 + j / 100) for j in range(20)]
        )
    ]
    fitted = fit_calibration(asked)
    hybrid = fitted["hybrid"]
    assert hybrid["held_out_auroc"] == 1.0
    assert 0.2 < hybrid["calibration"]["midpoint"] < 0.6
    assert fitted["vector"]["calibration"]["cosine_weight"] == 1.0
    assert fitted["keyword"]["calibration"]["cosine_weight"] == 0.0
    assert hybrid["min_score 0.5"] == {"null_empty": 1.0, "answerable_empty": 0.0}


def test_fit_skips_evidence_the_run_did_not_measure() -> None:
    asked = [
        Asked(conversation=i % 2, answerable=i < 4, top=0.0, hits=0, cosine=None, keyword=k)
        for i, k in enumerate([0.9, 0.8, 0.7, 0.9, 0.1, 0.0, 0.2, 0.1])
    ]
    assert set(fit_calibration(asked)) == {"keyword"}


@pytest.mark.slow
def test_abstention_run_separates_own_from_foreign_questions(data_path: Path) -> None:
    out = run_trust(data_path, k=5)
    assert (out["answerable"], out["unanswerable"]) == (4, 4)
    assert out["auroc"] == 1.0
    assert out["null_empty"] == 1.0
    assert out["answerable_empty"] == 0.0
    assert out["R@256tok"] == 1.0


@pytest.mark.slow
def test_cli_abstention_mode_prints_the_figures(data_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["bench", "locomo", "--data", str(data_path), "--k", "5", "--abstention"]
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert {"auroc", "null_empty", "answerable_empty", "R@256tok", "R@1024tok"} <= set(figures)
    refused = CliRunner().invoke(
        app,
        ["bench", "locomo", "--data", str(data_path), "--abstention", "--retriever", "fts5-turn"],
    )
    assert refused.exit_code == 2
    assert "--abstention measures memdir's own search" in refused.output
