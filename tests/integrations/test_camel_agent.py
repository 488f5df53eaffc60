"""``MemdirChatMemory``: a memory camel-ai's real ``ChatAgent`` accepts, across restarts.

camel-ai 0.2.90 needs mcp 1 and memdir's server mcp 2, so camel-ai lives in an environment
of its own, ``.venv-camel`` (scripts/setup-camel; scripts/test makes it). Each check runs
there as a process of its own (``camel_checks.py``) and prints what it saw; the assertions
are here. Two checks in a row on one home are two processes: a restart.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CAMEL_PYTHON = ROOT / ".venv-camel" / "bin" / "python"
CHECKS = Path(__file__).with_name("camel_checks.py")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CAMEL_PYTHON.exists(),
        reason="camel-ai's environment .venv-camel is missing: run scripts/setup-camel",
    ),
]


def check(home: Path, name: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(CAMEL_PYTHON), str(CHECKS), str(home), name],
        capture_output=True, text=True, timeout=180, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_chat_agent_remembers_across_processes(tmp_path: Path) -> None:
    first = check(tmp_path, "first")
    assert first["records"] == [
        ["system", "You plan trips."],
        ["user", "I live in Lisbon."],
        ["assistant", "Noted: Lisbon."],
    ]
    second = check(tmp_path, "second")
    assert second["records_at_start"] == first["records"]  # the new agent's clear kept them
    assert second["model_saw"] == [
        {"role": "system", "content": "You plan trips."},
        {"role": "user", "content": "I live in Lisbon."},
        {"role": "assistant", "content": "Noted: Lisbon."},
        {"role": "user", "content": "Where do I live?"},
    ]
    transcript = tmp_path / "sessions" / "camel-bot" / "trip.jsonl"
    roles = [json.loads(line)["role"] for line in transcript.read_text().splitlines()]
    assert roles == ["system", "user", "assistant", "user", "assistant"]  # one system message


def test_camel_memory_operations(tmp_path: Path) -> None:
    """pop_records, remove_records_by_indices, tool calls, clean_tool_calls and reset, as
    ChatAgent calls them (asserted inside the check), recorded and never erased."""
    result = check(tmp_path, "contract")
    assert result["methods"][:2] == ["camel-remove", "camel-remove"]
    assert result["methods"][-1] == "camel-clear"
    assert result["messages"] >= 9  # every record written is still in the transcript


def test_restarts_keep_one_system_message(tmp_path: Path) -> None:
    assert check(tmp_path, "restarts") == {"ok": True}


def test_a_credential_is_refused_and_nothing_written(tmp_path: Path) -> None:
    result = check(tmp_path, "credentials")
    assert result["error"].startswith("CredentialRefusedError: a chat record was not saved")
    assert result["key_on_disk"] is False
    assert result["records"] == [["system", "You plan trips."]]


def test_a_memdir_compaction_reads_as_a_record(tmp_path: Path) -> None:
    result = check(tmp_path, "compaction")
    assert result["records"] == [["system", "You plan trips."], ["user", "Said hello."]]
