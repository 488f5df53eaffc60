"""Hostile transcripts handed to ``memdir hook codex`` as Codex hands them (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

THREAD = "0199a0a0-aaaa-bbbb-cccc-123456789abc"
SECRET = "The vault code is 4471-outside-the-codex-folder."
FAST = ["--set", "embeddings.provider=hash"]


def rollout_line(text: str) -> str:
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return json.dumps({"type": "response_item", "payload": item})


def test_a_rollout_found_by_thread_id_may_not_link_out_of_the_sessions_folder(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex, outside = tmp_path / "codex", tmp_path / "private" / "notes.jsonl"
    outside.parent.mkdir()
    outside.write_text(rollout_line(SECRET) + "\n", encoding="utf-8")
    day = codex / "sessions" / "2026" / "11" / "27"
    day.mkdir(parents=True)
    (day / f"rollout-2026-11-27T10-00-00-{THREAD}.jsonl").symlink_to(outside)
    monkeypatch.setenv("CODEX_HOME", str(codex))
    notify = {"type": "agent-turn-complete", "thread-id": THREAD, "turn-id": "t1",
              "input-messages": [], "last-assistant-message": "ok"}  # fmt: skip
    stop = {"session_id": THREAD, "transcript_path": None, "hook_event_name": "Stop"}
    for args, stdin in ((["hook", "codex", json.dumps(notify)], ""),
                        (["hook", "codex"], json.dumps(stop))):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "memdir", *FAST, *args],
            input=stdin, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "is outside" in done.stderr, done.stderr
        assert "--sessions-root" in done.stderr
    kept = [p.read_text("utf-8") for p in home.rglob("*") if p.is_file() and p.suffix != ".db"]
    assert not any("4471" in text for text in kept)
