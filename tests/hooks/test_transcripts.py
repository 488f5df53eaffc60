"""Reading the hosts' transcript files: what is kept, what is left out, and the bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.errors import InvalidInputError, NotFoundError
from memdir.interfaces.hooks import find_codex_rollout, read_claude_code, read_codex
from memdir.interfaces.hooks.transcripts import MAX_MESSAGES, confined_transcript

DATA = Path(__file__).parent / "data"
CLAUDE = next((DATA / "claude-code").rglob("*.jsonl"))
CODEX = next((DATA / "codex").rglob("*.jsonl"))


def test_claude_code_keeps_the_conversation_text_only() -> None:
    transcript = read_claude_code(CLAUDE)
    assert [(m.role, m.text[:24]) for m in transcript.messages] == [
        ("user", "My name is Dana. We deci"),
        ("assistant", "I'll add billing/db.py w"),
        ("assistant", "Done: billing/db.py open"),
        ("user", "Thanks. I prefer pytest "),
        ("assistant", "Added tests/test_db.py w"),
    ]
    assert transcript.messages[0].id == "0d9e8f70-0000-4000-8000-000000000002"  # the uuid
    assert transcript.skipped_lines == 1  # the line a crash cut short
    assert not transcript.truncated


def test_codex_keeps_the_conversation_text_only() -> None:
    transcript = read_codex(CODEX)
    assert [(m.role, m.text[:20]) for m in transcript.messages] == [
        ("user", "Remember that the st"),
        ("assistant", "scripts/deploy.sh no"),
        ("user", "Good. I like small c"),
        ("assistant", "Committed as 'deploy"),
    ]
    again = read_codex(CODEX)
    assert [m.id for m in again.messages] == [m.id for m in transcript.messages]  # stable
    assert len({m.id for m in transcript.messages}) == 4


def test_a_huge_transcript_is_read_from_its_end(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for n in range(MAX_MESSAGES * 3):
            record = {"type": "user", "uuid": f"u{n}", "message": {"role": "user",
                      "content": f"message number {n} " + "x" * 200}}  # fmt: skip
            handle.write(json.dumps(record) + "\n")
    bounded = read_claude_code(path, limit=50_000)
    assert bounded.truncated
    assert bounded.messages[-1].id == f"u{MAX_MESSAGES * 3 - 1}"
    assert len(bounded.messages) < 250
    assert bounded.skipped_lines == 0
    whole = read_claude_code(path)
    assert whole.truncated
    assert len(whole.messages) == MAX_MESSAGES


def test_a_long_message_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    content = [{"type": "text", "text": "y" * 50_000}]
    record = {
        "type": "assistant",
        "uuid": "a1",
        "message": {"role": "assistant", "content": content},
    }
    path.write_text(json.dumps(record) + "\n", "utf-8")
    [message] = read_claude_code(path).messages
    assert len(message.text) < 21_000
    assert message.text.endswith("[...]")


def test_paths_are_confined_to_the_hosts_folder(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    inside = root / "a.jsonl"
    inside.write_text("", "utf-8")
    assert confined_transcript(str(inside), root, "--x") == inside.resolve()
    with pytest.raises(InvalidInputError, match="outside"):
        confined_transcript(str(root / ".." / "a.jsonl"), root, "--x")
    with pytest.raises(InvalidInputError, match=r"not a \.jsonl"):
        confined_transcript(str(root / "a.txt"), root, "--x")
    with pytest.raises(NotFoundError):
        confined_transcript(str(root / "missing.jsonl"), root, "--x")


def test_a_thread_id_finds_its_rollout_and_nothing_else(tmp_path: Path) -> None:
    root = DATA / "codex" / "sessions"
    assert find_codex_rollout(root, "019a6f3c-2b7d-7e10-9c4a-5d6e7f809a1b") == CODEX
    assert find_codex_rollout(root, "0b1c2d3e-0000-4000-8000-00000000beef") is None
    assert find_codex_rollout(tmp_path / "none", "abc") is None
    with pytest.raises(InvalidInputError):
        find_codex_rollout(root, "*")
