"""The scale harness end to end on a tiny workspace, with the hash embedder."""

from __future__ import annotations

from pathlib import Path

from memdir.bench.notes import render_note, sample_queries, write_workspace
from memdir.bench.scale import run_scale
from memdir.embeddings.base import HashEmbedder


def test_notes_are_deterministic(tmp_path: Path) -> None:
    a = write_workspace(tmp_path / "a", 30)
    b = write_workspace(tmp_path / "b", 30)
    assert a == b
    assert a["chunks"] >= 30
    assert sorted(p.read_text() for p in (tmp_path / "a").rglob("*.md")) == sorted(
        p.read_text() for p in (tmp_path / "b").rglob("*.md")
    )
    assert len(set(sample_queries(20))) > 5


def test_note_looks_like_a_daily_note() -> None:
    import random
    from datetime import date

    text = render_note(date(2020, 2, 3), random.Random(1))
    assert text.startswith("# 2020-02-03\n\n## ")
    assert "\n- " in text


def test_run_scale_reports_figures(tmp_path: Path) -> None:
    out = run_scale(40, embedder=HashEmbedder(384), sample_units=50, queries=10, workdir=tmp_path)
    assert out["workspace"]["chunks"] >= 40
    assert out["index_full"]["units"] == out["workspace"]["chunks"] + out["workspace"]["blocks"]
    assert out["embedding_raw"]["units_per_s"] > 0
    assert out["index_model_subset"]["units"] > 0
    assert out["search"]["queries"] == 10
    assert 0 < out["search"]["p50_ms"] <= out["search"]["p95_ms"]
    assert out["resync_unchanged_s"] < out["index_full"]["seconds"] + 1
    assert out["peak_rss_mb"] > 0
    assert "cheap hash vectors" in out["note"]
    assert out["vector_graphs"] == {"rows": {}, "build_s": out["vector_graphs"]["build_s"], "mb": 0}


def test_run_scale_times_the_vector_graphs_apart(tmp_path: Path) -> None:
    """Past the threshold the sync leaves the graphs to the timed build, which makes them."""
    out = run_scale(
        40, embedder=HashEmbedder(384), sample_units=50, queries=5, workdir=tmp_path,
        graph_min_rows=10,
    )  # fmt: skip
    graphs = out["vector_graphs"]
    units = out["workspace"]["chunks"] + out["workspace"]["blocks"]
    assert sum(graphs["rows"].values()) == units
    assert graphs["build_s"] > 0
    assert graphs["mb"] > 0


def test_note_vocabulary_has_a_long_tail() -> None:
    """Words follow a Zipf law: names repeat, but the vocabulary keeps growing."""
    import random
    import re
    from collections import Counter
    from datetime import date

    rng = random.Random(2)
    words = Counter(
        w.lower()
        for n in range(200)
        for w in re.findall(r"[^\W\d]+", render_note(date(2020, 1, 1), rng))
    )
    assert len(words) > 3_000  # the first generator used ~130 words in all
    assert words["alice"] > 10 * max(1, words["omar"])  # a core team and a tail


def test_zipf_draws_are_skewed_and_deterministic() -> None:
    import random
    from collections import Counter

    from memdir.bench.notes import Zipf, made_up_words

    words = made_up_words(500, 9)
    assert len(set(words)) == 500
    assert words == made_up_words(500, 9)
    rng, zipf = random.Random(1), Zipf(words)
    counts = Counter(zipf.draw(rng) for _ in range(20_000))
    assert counts[words[0]] > 5 * counts[words[20]] > 0
    assert len(counts) > 300
