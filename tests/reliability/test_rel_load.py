"""Many processes and threads on one home: no lost write, no lock error reaches a caller.

Runs ``benchmarks/load.py`` (the same code that prints the figures in
docs/reliability.md) with a short duration and checks its verdict.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support_reliability import child_env

pytestmark = pytest.mark.slow
LOAD = Path(__file__).parents[2] / "benchmarks" / "load.py"


def test_mixed_load_loses_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(LOAD),
            "--processes",
            "3",
            "--threads",
            "3",
            "--seconds",
            "4",
            "--home",
            str(tmp_path / "home"),
            "--json",
        ],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.stdout, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["locked_errors"] == 0, figures["error_samples"]
    assert figures["errors"] == 0, figures["error_samples"]
    assert figures["lost"] == []
    for op in ("append", "save", "search", "sync", "write"):
        assert figures["ops"][op]["count"] > 0, f"no {op} ran: the mix proves nothing"
    assert done.returncode == 0
    assert "Traceback" not in done.stderr
