"""Calibrated scores: the top score is the confidence that memory holds something relevant,
and a question about something never stored gets a real "nothing found"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir import Memory
from memdir.embeddings.base import HashEmbedder
from memdir.errors import ConfigError, InvalidInputError
from memdir.interfaces.cli import app
from memdir.search.calibration import KEYWORD_ONLY, MODELS, Calibration, choose_calibration
from memdir.tools import call_tool

NOTES = {
    "memory/2026-11-20.md": (
        "# 2026-11-20\n\n"
        "- We chose PostgreSQL 16 for the billing service database.\n"
        "- The staging cluster runs in eu-west-1.\n"
        "- Deploys happen every Thursday after the standup.\n"
    ),
    "memory/2026-11-21.md": (
        "# 2026-11-21\n\n"
        "- Redis caches the session tokens of the web app.\n"
        "- Backups of the billing database run nightly at 02:00 UTC.\n"
    ),
    "MEMORY.md": "# Memory\n\n- The user prefers short answers with code samples.\n",
}


def write_notes(memory: Memory) -> None:
    for path, text in NOTES.items():
        memory.write_file(path, text)
    memory.sync()


def test_confidence_rises_with_evidence_and_stays_in_the_unit_interval() -> None:
    calibration = Calibration(cosine_weight=0.8, midpoint=0.5, slope=40.0)
    values = [calibration.confidence(c, c) for c in (0.0, 0.3, 0.45, 0.5, 0.55, 0.7, 1.0)]
    assert values == sorted(values)
    assert values[0] < 0.001
    assert values[-1] > 0.999
    assert calibration.confidence(0.5, 0.5) == pytest.approx(0.5)
    assert calibration.confidence(None, None) == calibration.confidence(0.0, 0.0)
    assert calibration.confidence(0.5, 7.0) == calibration.confidence(0.5, 1.0)  # share clipped


@pytest.mark.parametrize(
    "values", [{"cosine_weight": 1.5}, {"cosine_weight": -0.1}, {"slope": 0.0}]
)
def test_bad_calibrations_are_refused(values: dict[str, float]) -> None:
    arguments = {"cosine_weight": 0.5, "midpoint": 0.5, "slope": 10.0, **values}
    with pytest.raises(InvalidInputError, match="out of range"):
        Calibration(**arguments)


def test_calibration_is_chosen_by_embedder_and_store() -> None:
    model = MODELS[("local", "all-MiniLM-L6-v2-onnx-int8")]
    assert choose_calibration("local", "all-MiniLM-L6-v2-onnx-int8", True) == model.hybrid
    assert choose_calibration("local", "all-MiniLM-L6-v2-onnx-int8", False) == model.vector
    assert choose_calibration(None, None, True) == KEYWORD_ONLY
    assert choose_calibration(None, None, False) is None
    assert choose_calibration("openai", "text-embedding-3-small", True) is None


def test_uncalibrated_embedder_keeps_relative_scores(home: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder(64)) as memory:
        write_notes(memory)
        results = memory.search("billing database", min_score=0.0)
    assert not results.calibrated
    assert results.confidence is None
    assert results.hits
    assert "confidence" not in results.hits[0].breakdown


def test_keyword_only_search_abstains_on_words_memory_never_saw(home: Path) -> None:
    with Memory.open(home, embedder=None) as memory:
        write_notes(memory)
        found = memory.search("which database for the billing service?")
        weak = memory.search("who baked the cake for the staging party?")
        missing = memory.search("chocolate banana bread recipe")
    assert found.calibrated
    assert found.confidence is not None
    assert found.confidence > 0.5
    assert found.hits[0].citation == "memory/2026-11-20.md:3-3"
    assert found.hits[0].score == pytest.approx(found.confidence, abs=1e-6)
    # one word of four matches: a weak match, hidden by the floor and said so
    assert weak.hits == ()
    assert weak.confidence is not None
    assert weak.confidence < 0.1
    assert weak.below_floor
    assert weak.notice.startswith("nothing relevant found for 'who baked the cake for the")
    assert "in 3 files: the best match scores 0.0" in weak.notice
    assert weak.notice.endswith("below min_score 0.1")
    # no word matches at all: nothing to hide
    assert missing.hits == ()
    assert not missing.below_floor
    assert missing.notice == "nothing matched 'chocolate banana bread recipe' in 3 files"


@pytest.mark.slow
def test_real_model_tells_a_hit_from_a_miss(home: Path) -> None:
    with Memory.open(home) as memory:
        write_notes(memory)
        found = memory.search("which database did we choose for billing?")
        paraphrase = memory.search("what do we use to cache login sessions?")
        missing = memory.search("recipe for chocolate banana bread")
        weak = memory.search("recipe for chocolate banana bread", min_score=0.0)
    assert found.hits[0].citation == "memory/2026-11-20.md:3-3"
    assert found.hits[0].score == pytest.approx(found.confidence, abs=1e-6)
    assert found.confidence is not None
    assert found.confidence > 0.5
    scores = [hit.score for hit in found.hits]
    assert scores == sorted(scores, reverse=True)
    assert all(hit.breakdown["confidence"] == pytest.approx(found.confidence) for hit in found.hits)
    assert paraphrase.hits
    assert paraphrase.hits[0].citation == "memory/2026-11-21.md:3-3"
    assert missing.hits == ()
    assert missing.notice.startswith("nothing relevant found for 'recipe for chocolate")
    assert "in 3 files" in missing.notice
    # the floor is what hides the weak matches: without it they come back, scored low
    assert weak.hits
    assert all(hit.score < 0.1 for hit in weak.hits)
    assert weak.confidence == missing.confidence


def test_tool_and_cli_say_nothing_relevant_was_found(home: Path) -> None:
    with Memory.open(home, embedder=None) as memory:
        write_notes(memory)
        text = call_tool(memory, "memory_search", {"query": "who baked the staging cake?"})
        found = call_tool(memory, "memory_search", {"query": "billing service database"})
    assert text.startswith("Nothing relevant found for 'who baked the staging cake?' in 3 files")
    assert text.endswith("below min_score 0.1. Pass min_score=0 to see the weak matches.")
    assert re.match(r"\d result\(s\) for 'billing service database' \(confidence 1\.00;", found)
    result = CliRunner().invoke(app, ["--home", str(home), "search", "who baked the staging cake?"])
    assert result.exit_code == 0
    assert "nothing relevant found" in result.stdout
    assert "(--min-score 0 shows the weak matches)" in result.stdout


def test_configured_calibration_replaces_the_built_in_one(home: Path) -> None:
    overrides = {
        "search": {
            "calibration_cosine_weight": 0.0,
            "calibration_midpoint": 2.0,
            "calibration_slope": 10.0,
        }
    }
    with Memory.open(home, embedder=None, overrides=overrides) as memory:
        write_notes(memory)
        results = memory.search("which database for the billing service?")
    assert results.hits == ()  # an impossible midpoint: no evidence is ever enough
    assert results.confidence is not None
    assert results.confidence < 0.001
    with pytest.raises(ConfigError, match=r"set all three of search\.calibration_cosine_weight"):
        Memory.open(home, embedder=None, overrides={"search": {"calibration_slope": 3.0}})
