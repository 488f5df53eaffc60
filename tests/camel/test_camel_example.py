"""The CAMEL-style example runs end to end in a subprocess and leaves real memory behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support_camel import open_memory

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "camel_memory.py"


@pytest.mark.slow  # a fresh interpreter importing memdir: ~2-3 s
def test_example_runs_and_its_memory_is_searchable(tmp_path: Path) -> None:
    home = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[tool remember] Saved:" in out
    assert "reloaded 5 records from session 'lisbon-trip'" in out
    assert "search hit memory/" in out
    assert "1 fact(s) for 'allergies peanuts'" in out
    assert "Traceback" not in done.stderr
    with open_memory(home, "travel-bot") as memory:
        assert [f.text for f in memory.list_facts()] == ["The user is allergic to peanuts"]
        assert memory.session("lisbon-trip").exists
