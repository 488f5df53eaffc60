"""The acceptance scenario across real processes: each step is a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

SCRIPT = """
import json, sys
from datetime import datetime
from memdir.embeddings.base import HashEmbedder
from memdir.facts import FactBook

home, action, text, as_of = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
with FactBook.open(home, HashEmbedder(64)) as book:
    book.sync()
    if action == "save":
        outcome = book.save(text)
        print(json.dumps({"action": outcome.action, "id": outcome.fact.id}))
    else:
        when = datetime.fromisoformat(as_of) if as_of else None
        hits = book.recall(text, as_of=when)
        print(json.dumps([h.fact.text for h in hits]))
"""


def _run(home: Path, action: str, text: str, as_of: str = "") -> object:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(home), action, text, as_of],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_fresh_process_recalls_what_another_saved(home: Path) -> None:
    saved = _run(home, "save", "My cat's name is Whiskerino")
    assert saved["action"] == "add"  # type: ignore[index]
    assert _run(home, "recall", "what is my cat called?") == ["My cat's name is Whiskerino"]
    before = datetime.now(UTC).isoformat()
    changed = _run(home, "save", "My cat is now called Luna")
    assert changed["action"] == "supersede"  # type: ignore[index]
    assert _run(home, "recall", "what is my cat called?") == ["My cat is now called Luna"]
    assert _run(home, "recall", "what is my cat called?", before) == ["My cat's name is Whiskerino"]
    note = next((home / "workspace" / "memory").glob("*.md")).read_text()
    assert f"supersedes={saved['id']}" in note  # type: ignore[index]
