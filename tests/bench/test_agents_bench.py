"""``memdir bench agents`` drives a real ``memdir serve``: a short run counts what it should."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.bench.agents import run_agents


@pytest.mark.slow
def test_a_short_run_has_no_errors_and_the_expected_refusals(tmp_path: Path) -> None:
    report = run_agents(tmp_path, agents=12, threads=2, embedder="hash", sample_every=4)
    assert report.errors == 0, report.error_samples
    assert report.server_alive
    assert report.requests["mcp_tool"] == report.requests["rest_search"] == 12
    assert report.refused_as_expected == 2  # agent 0: its token for agent 1, an invalid id
    assert report.samples[-1]["visits"] == 12
    assert 0 < report.samples[-1]["open_files"] < 1024
