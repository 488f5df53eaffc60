"""Two real processes extracting for one agent at the same time: exactly one runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir.workspace import Workspace

WORKER = Path(__file__).with_name("extract_worker.py")


@pytest.mark.slow
def test_two_processes_one_agent_exactly_one_runs(home: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(WORKER.parent)}
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(home), "coder", name, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in ("alpha", "beta")
    ]
    deadline = time.monotonic() + 30
    while not all(Path(f"{go}.{n}.ready").exists() for n in ("alpha", "beta")):
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.01)
    go.touch()
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=60)
        assert worker.returncode == 0, err
        results.append(json.loads(out))
    ran = [r for r in results if r["ran"]]
    skipped = [r for r in results if not r["ran"]]
    assert len(ran) == 1, results
    assert len(skipped) == 1, results
    assert "another extraction for agent 'coder' is running" in skipped[0]["skipped"]
    memory_dir = Workspace(home, "coder").memory_dir  # dated by the real clock
    texts = "".join(p.read_text() for p in memory_dir.glob("*.md"))
    assert texts.count("- written by") == 1
    assert f"- written by {ran[0]['name']}" in texts
