"""Reads never write: search, recall, get and prompt answer on a read-only home and on a
full disk, through the Python API, the CLI, REST and MCP; writes are refused clearly.

The read-only home is a real read-only bind mount in a private mount namespace (as root,
whom file modes do not stop) or, without user namespaces, file modes for a user other
than root; the full disk is a real tmpfs filled to the last byte (``bench/readable.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.bench.readable import run_readable

INTERFACES = ("python", "cli", "rest", "mcp")
READS = ("search", "recall", "get", "prompt")


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("condition", "refusal"), [("read_only", "503 Read only home"), ("full_disk", "507 Disk full")]
)
def test_reads_answer_and_writes_are_refused(tmp_path: Path, condition: str, refusal: str) -> None:
    report = run_readable(tmp_path, condition)
    if report.method.startswith("skipped"):
        pytest.skip(f"this machine cannot produce the condition: {report.method}")
    assert report.problems == []
    for interface in INTERFACES:
        for read in READS:
            assert report.reads[f"{interface}:{read}"], (interface, read)
    assert report.writes["rest:PUT file"] == refusal
    assert report.writes["rest:POST fact"] == refusal
    assert (
        "nothing was changed" in report.writes["cli:files write"]
        or "left as it was" in (report.writes["cli:files write"])
    )
    if condition == "full_disk":  # the same server writes again once there is room
        assert report.reads["rest:write once there is space"]
        assert report.reads["rest:search finds it"]
    assert report.wrong == 0
