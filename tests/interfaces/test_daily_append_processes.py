"""Two real processes append 10-line entries to today's note through the
``memory_append_daily`` tool, 200 times each, while saving facts: nothing is lost, no
entry is torn or interleaved, and every citation the tool returned is exact."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory

pytestmark = pytest.mark.slow

WORKERS, ENTRIES, LINES, SAVE_EVERY = 2, 200, 10, 20

_WORKER = """
import json, sys, time
from pathlib import Path
from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory
from memdir.tools import call_tool_result

home, go = Path(sys.argv[1]), Path(sys.argv[2])
worker, count, size, every = (int(arg) for arg in sys.argv[3:])
out = []
with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
    while not go.exists():
        time.sleep(0.002)
    for n in range(count):
        lines = [f"- w{worker} entry {n:03d} line {k}" for k in range(size)]
        result = call_tool_result(memory, "memory_append_daily", {"text": "\\n".join(lines)})
        data = result.data
        out.append([lines, data["path"], data["start_line"], data["end_line"]])
        if n % every == 0:
            call_tool_result(memory, "memory_save", {"content": f"Parking code w{worker}-{n:03d}"})
print(json.dumps(out))
"""


def test_two_processes_appending_multi_line_entries_lose_nothing(
    home: Path, tmp_path: Path
) -> None:
    (home / "workspace").mkdir(parents=True)
    go = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(home), str(go)]
            + [str(value) for value in (n, ENTRIES, LINES, SAVE_EVERY)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WORKERS)
    ]
    go.touch()
    results = []
    for process in processes:
        out, err = process.communicate(timeout=280)
        assert process.returncode == 0, err
        results.extend(json.loads(out))
    assert len(results) == WORKERS * ENTRIES
    paths = {path for _, path, _, _ in results}
    assert len(paths) == 1  # (a run across midnight would split the note; it did not)
    note = (home / "workspace" / paths.pop()).read_text(encoding="utf-8").split("\n")
    for lines, _, start, end in results:
        assert end - start == LINES - 1
        assert note[start - 1 : end] == lines  # whole, in place, cited exactly
    entry_lines = [line for line in note if " entry " in line]
    assert len(entry_lines) == WORKERS * ENTRIES * LINES
    saves = [line for line in note if "Parking code" in line]
    assert len(saves) == WORKERS * ENTRIES // SAVE_EVERY
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        codes = {fact.text for fact in memory.list_facts(include_superseded=True)}
    assert {f"Parking code w{w}-{n:03d}" for w in range(WORKERS)
            for n in range(0, ENTRIES, SAVE_EVERY)} <= codes  # fmt: skip
