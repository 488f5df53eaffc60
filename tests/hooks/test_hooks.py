"""``memdir hook claude-code`` / ``memdir hook codex`` run as the hosts run them: a real
subprocess, the host's input on stdin (or as the last argument, Codex's notify), and the
recorded transcripts in tests/hooks/data copied where the host keeps them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"
CLAUDE_SESSION = "5f0c2a7e-8d41-4b6a-9e3f-1c2d3e4f5a6b"
CLAUDE_FILE = f"projects/-home-dana-shop/{CLAUDE_SESSION}.jsonl"
CODEX_THREAD = "019a6f3c-2b7d-7e10-9c4a-5d6e7f809a1b"
CODEX_FILE = f"sessions/2026/11/21/rollout-2026-11-21T14-02-11-{CODEX_THREAD}.jsonl"
FAST = ["--set", "embeddings.provider=hash"]


@pytest.fixture
def hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Claude Code's and Codex's folders with the recorded transcripts, as the hosts keep them."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    shutil.copytree(DATA / "claude-code", claude)
    shutil.copytree(DATA / "codex", codex)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    return claude, codex


def memdir(*args: str, stdin: str = "", fast: bool = True) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "memdir", *(FAST if fast else []), *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=300)


def succeeded_quietly(done: subprocess.CompletedProcess[str]) -> None:
    """Exit code 0 and nothing on stdout, which Claude Code would read as the hook's answer."""
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", done.stdout


def claude_input(claude: Path, event: str = "SessionEnd", **extra: Any) -> str:
    payload = {
        "session_id": CLAUDE_SESSION,
        "transcript_path": str(claude / CLAUDE_FILE),
        "cwd": "/home/dana/shop",
        "permission_mode": "default",
        "hook_event_name": event,
        **({"reason": "prompt_input_exit"} if event == "SessionEnd" else {}),
        **({"stop_hook_active": False} if event == "Stop" else {}),
        **extra,
    }
    return json.dumps(payload)


def notification(thread: str = CODEX_THREAD, **extra: Any) -> str:
    return json.dumps({
        "type": "agent-turn-complete", "thread-id": thread, "turn-id": "turn-2",
        "cwd": "/home/dana/shop", "input-messages": ["Good. I like small commits, so commit "
        "that change on its own."], "last-assistant-message": "Committed.", **extra,
    })  # fmt: skip


def facts(home: Path) -> list[str]:
    done = memdir("facts", "list", "--json")
    assert done.returncode == 0, done.stderr
    return sorted(fact["text"] for fact in json.loads(done.stdout))


def notes(home: Path) -> list[Path]:
    return sorted((home / "workspace" / "memory").glob("????-??-??-*.md"))


def search(query: str, fast: bool = True) -> list[dict[str, Any]]:
    done = memdir("search", query, "--json", fast=fast)
    assert done.returncode == 0, done.stderr
    hits: list[dict[str, Any]] = json.loads(done.stdout)["hits"]
    return hits


def test_claude_code_session_end_lands_facts_and_a_note_that_search_finds(
    hosts: tuple[Path, Path], home: Path
) -> None:
    claude, _ = hosts
    done = memdir("hook", "claude-code", stdin=claude_input(claude))
    succeeded_quietly(done)
    assert "5 messages added" in done.stderr, done.stderr
    assert "note memory/" in done.stderr
    assert facts(home) == [
        "Decided: use PostgreSQL for the billing service, not MySQL",
        "The user prefers pytest over unittest, so write the tests with pytest fixtures please",
        "The user's name is Dana",
    ]
    [note] = notes(home)
    text = note.read_text("utf-8")
    assert f"claude-code-{CLAUDE_SESSION}" in text
    assert "psycopg connection pool" in text  # the assistant's text, not its tool calls
    for left_out in ("/clear", "Look at the existing config", "File created successfully",
                     "Search the repository for MySQL"):  # fmt: skip
        assert left_out not in text
    hits = search("billing service database")
    assert any("PostgreSQL" in hit["text"] for hit in hits), hits
    cited = {hit["path"] for hit in hits}
    assert note.relative_to(home / "workspace").as_posix() in cited or any(
        p.startswith("memory/") for p in cited
    )
    log = (home / "logs" / "hooks.log").read_text("utf-8")
    assert f"claude-code-{CLAUDE_SESSION}: 5 messages added" in log


def test_the_same_session_handed_twice_is_curated_once(
    hosts: tuple[Path, Path], home: Path
) -> None:
    claude, _ = hosts
    assert memdir("hook", "claude-code", stdin=claude_input(claude)).returncode == 0
    first_facts, first_notes = facts(home), notes(home)
    daily = sorted((home / "workspace" / "memory").glob("????-??-??.md"))[0].read_text("utf-8")
    again = memdir("hook", "claude-code", stdin=claude_input(claude))
    assert again.returncode == 0
    assert "0 messages added, 5 known; extraction nothing new" in again.stderr
    assert facts(home) == first_facts
    assert notes(home) == first_notes
    assert (
        sorted((home / "workspace" / "memory").glob("????-??-??.md"))[0].read_text("utf-8") == daily
    )
    transcript = home / "sessions" / "global" / f"claude-code-{CLAUDE_SESSION}.jsonl"
    assert len(transcript.read_text("utf-8").splitlines()) == 5


def test_stop_after_each_turn_then_session_end_reads_every_turn(
    hosts: tuple[Path, Path], home: Path
) -> None:
    claude, _ = hosts
    path = claude / CLAUDE_FILE
    full = path.read_text("utf-8").splitlines(keepends=True)
    path.write_text("".join(full[:7]), "utf-8")  # the first turn only
    stop = memdir("hook", "claude-code", stdin=claude_input(claude, "Stop"))
    assert stop.returncode == 0
    assert stop.stdout == ""
    assert "3 messages added" in stop.stderr
    assert "note" not in stop.stderr
    assert notes(home) == []
    path.write_text("".join(full), "utf-8")  # the second turn; the session ends
    end = memdir("hook", "claude-code", stdin=claude_input(claude))
    assert "2 messages added, 3 known" in end.stderr, end.stderr
    assert "extraction heuristic" in end.stderr  # the cooldown does not hold the end back
    assert "The user prefers pytest over unittest" in " ".join(facts(home))
    assert len(notes(home)) == 1


def test_two_hooks_at_once_store_each_message_once(hosts: tuple[Path, Path], home: Path) -> None:
    claude, _ = hosts
    command = [sys.executable, "-m", "memdir", *FAST, "hook", "claude-code"]
    pipe = subprocess.PIPE
    procs = [
        subprocess.Popen(command, stdin=pipe, stdout=pipe, stderr=pipe, text=True) for _ in range(2)
    ]
    outputs = [proc.communicate(claude_input(claude), timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    transcript = home / "sessions" / "global" / f"claude-code-{CLAUDE_SESSION}.jsonl"
    ids = [json.loads(line)["id"] for line in transcript.read_text("utf-8").splitlines()]
    assert len(ids) == len(set(ids)) == 5
    assert len(notes(home)) == 1


def test_detached_hook_returns_at_once_and_curates_in_the_background(
    hosts: tuple[Path, Path], home: Path
) -> None:
    claude, _ = hosts
    done = memdir("hook", "claude-code", "--detach", stdin=claude_input(claude))
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr == ""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not notes(home):
        time.sleep(0.2)
    assert len(notes(home)) == 1
    while time.monotonic() < deadline and "5 messages added" not in _log(home):
        time.sleep(0.2)
    assert "The user's name is Dana" in facts(home)


def _log(home: Path) -> str:
    path = home / "logs" / "hooks.log"
    return path.read_text("utf-8") if path.is_file() else ""


def test_codex_notify_finds_the_rollout_of_the_thread(hosts: tuple[Path, Path], home: Path) -> None:
    done = memdir("hook", "codex", notification())
    succeeded_quietly(done)
    assert f"codex-{CODEX_THREAD}: 4 messages added" in done.stderr, done.stderr
    assert "note" not in done.stderr  # a turn ended, not the session
    assert facts(home) == [
        "The staging server is staging.shop.internal on port 8443",
        "The user likes small commits, so commit that change on its own",
    ]
    hits = search("staging server port")
    assert any("8443" in hit["text"] for hit in hits), hits
    again = memdir("hook", "codex", notification())
    assert "0 messages added, 4 known" in again.stderr


def test_codex_rollout_with_end_writes_the_session_note_once(
    hosts: tuple[Path, Path], home: Path
) -> None:
    _, codex = hosts
    rollout = str(codex / CODEX_FILE)
    first = memdir("hook", "codex", "--rollout", rollout, "--end")
    assert first.returncode == 0, first.stderr
    assert "note memory/" in first.stderr, first.stderr
    [note] = notes(home)
    text = note.read_text("utf-8")
    assert "staging.shop.internal" in text
    assert "--staging" in text
    for left_out in ("AGENTS.md instructions", "environment_context", "cat scripts/deploy.sh",
                     "Locating deploy script"):  # fmt: skip
        assert left_out not in text
    second = memdir("hook", "codex", "--rollout", rollout, "--end")
    assert "note" not in second.stderr
    assert notes(home) == [note]


def test_codex_stop_hook_reads_the_transcript_path_on_stdin(
    hosts: tuple[Path, Path], home: Path
) -> None:
    _, codex = hosts
    payload = {
        "session_id": CODEX_THREAD,
        "transcript_path": str(codex / CODEX_FILE),
        "cwd": "/home/dana/shop",
        "hook_event_name": "Stop",
        "model": "gpt-5-codex",
    }
    done = memdir("hook", "codex", stdin=json.dumps(payload))
    assert f"codex-{CODEX_THREAD}: 4 messages added" in done.stderr, done.stderr


def test_codex_stop_hook_without_a_transcript_path_finds_the_rollout(
    hosts: tuple[Path, Path], home: Path
) -> None:
    payload = {"session_id": CODEX_THREAD, "transcript_path": None, "hook_event_name": "Stop"}
    done = memdir("hook", "codex", stdin=json.dumps(payload))
    assert f"codex-{CODEX_THREAD}: 4 messages added" in done.stderr, done.stderr
    missing = {**payload, "session_id": "0b1c2d3e-0000-4000-8000-00000000beef"}
    refused = memdir("hook", "codex", stdin=json.dumps(missing))
    succeeded_quietly(refused)
    assert "no rollout of Codex session" in refused.stderr


def test_codex_notify_without_a_rollout_keeps_the_notified_turn(
    hosts: tuple[Path, Path], home: Path
) -> None:
    thread = "0b1c2d3e-0000-4000-8000-00000000beef"
    done = memdir("hook", "codex", notification(thread))
    assert f"codex-{thread}: 2 messages added" in done.stderr, done.stderr


def test_an_idle_codex_session_gets_its_note_when_the_next_one_reports(
    hosts: tuple[Path, Path], home: Path
) -> None:
    assert memdir("hook", "codex", notification()).returncode == 0
    transcript = home / "sessions" / "global" / f"codex-{CODEX_THREAD}.jsonl"
    hour_ago = time.time() - 3600
    os.utime(transcript, (hour_ago, hour_ago))
    later = memdir("hook", "codex", notification("0b1c2d3e-0000-4000-8000-00000000beef"))
    assert "idle sessions noted: memory/" in later.stderr, later.stderr
    [note] = notes(home)
    assert f"codex-{CODEX_THREAD}" in note.read_text("utf-8")


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ("not json", "is not JSON"),
        ("[1, 2]", "is not a JSON object"),
        ('{"session_id": "x"}', "no 'transcript_path' string"),
        ('{"session_id": "x", "transcript_path": "/etc/passwd"}', "is outside"),
        ('{"session_id": "x", "transcript_path": "relative.jsonl"}', "is not absolute"),
        ('{"session_id": "../../x", "transcript_path": "TRANSCRIPT"}', "session id"),
    ],
)
def test_bad_input_is_logged_and_never_fails_the_host(
    hosts: tuple[Path, Path], home: Path, payload: str, said: str
) -> None:
    claude, _ = hosts
    payload = payload.replace("TRANSCRIPT", str(claude / CLAUDE_FILE))
    done = memdir("hook", "claude-code", stdin=payload)
    succeeded_quietly(done)
    assert said in done.stderr, done.stderr
    assert said in _log(home)
    assert not list(home.glob("sessions/*/*.jsonl"))


def test_a_link_out_of_the_hosts_folder_is_refused(
    hosts: tuple[Path, Path], home: Path, tmp_path: Path
) -> None:
    claude, _ = hosts
    outside = tmp_path / "elsewhere.jsonl"
    shutil.copy(claude / CLAUDE_FILE, outside)
    link = claude / "projects" / "-home-dana-shop" / "linked.jsonl"
    link.symlink_to(outside)
    done = memdir("hook", "claude-code", stdin=claude_input(claude, transcript_path=str(link)))
    assert done.returncode == 0, done.stderr
    assert "is outside" in done.stderr, done.stderr
    assert not list(home.glob("sessions/*/*.jsonl"))


@pytest.mark.slow
def test_captured_facts_are_found_with_the_local_embedding_model(
    hosts: tuple[Path, Path], home: Path
) -> None:
    claude, _ = hosts
    done = memdir("hook", "claude-code", stdin=claude_input(claude), fast=False)
    assert done.returncode == 0, done.stderr
    assert "3 facts saved" in done.stderr, done.stderr
    hits = search("which database does billing use?", fast=False)
    assert "PostgreSQL" in hits[0]["text"], hits


def test_a_host_that_keeps_stdin_open_is_not_waited_for(
    hosts: tuple[Path, Path], home: Path
) -> None:
    claude, _ = hosts
    command = [sys.executable, "-m", "memdir", *FAST, "hook", "claude-code"]
    quiet = subprocess.DEVNULL
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=quiet, stderr=quiet, text=True)
    assert proc.stdin is not None
    proc.stdin.write(claude_input(claude))
    proc.stdin.flush()  # and never closed, as a host may leave it
    try:
        assert proc.wait(timeout=120) == 0
    finally:
        proc.stdin.close()
    assert "5 messages added" in _log(home)


def test_codex_detached_with_its_options_forwarded(
    hosts: tuple[Path, Path], home: Path, tmp_path: Path
) -> None:
    _, codex = hosts
    moved = tmp_path / "elsewhere"
    shutil.move(codex / "sessions", moved)  # found only through --sessions-root
    done = memdir("hook", "codex", "--detach", "--sessions-root", str(moved), notification())
    succeeded_quietly(done)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and "messages added" not in _log(home):
        time.sleep(0.2)
    assert f"codex-{CODEX_THREAD}: 4 messages added" in _log(home)


def transcript_texts(home: Path, thread: str = CODEX_THREAD) -> list[str]:
    path = home / "sessions" / "global" / f"codex-{thread}.jsonl"
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    return [entry["content"] for entry in lines if entry.get("role") in ("user", "assistant")]


LAST_REPLY = "Committed as 'deploy: a --staging target' with only scripts/deploy.sh in it."


def test_codex_notify_before_the_rollout_exists_then_after_stores_each_message_once(
    hosts: tuple[Path, Path], home: Path
) -> None:
    _, codex = hosts
    rollout = codex / CODEX_FILE
    kept = rollout.read_bytes()
    rollout.unlink()  # Codex has not written the rollout yet when it notifies
    early = memdir("hook", "codex", notification(**{"last-assistant-message": LAST_REPLY}))
    assert "2 messages added, 0 known" in early.stderr, early.stderr
    rollout.write_bytes(kept)
    later = memdir("hook", "codex", notification(**{"last-assistant-message": LAST_REPLY}))
    assert "2 messages added, 2 known" in later.stderr, later.stderr
    texts = transcript_texts(home)
    assert len(texts) == 4
    assert len(set(texts)) == 4, texts


def test_codex_notify_while_the_rollout_is_half_written_stores_each_message_once(
    hosts: tuple[Path, Path], home: Path
) -> None:
    _, codex = hosts
    rollout = codex / CODEX_FILE
    kept = rollout.read_bytes()
    first_turn = len(b"".join(kept.splitlines(keepends=True)[:11]))
    rollout.write_bytes(kept[: first_turn + 60])  # the notified turn's line is cut short
    early = memdir("hook", "codex", notification(**{"last-assistant-message": LAST_REPLY}))
    assert "4 messages added, 0 known" in early.stderr, early.stderr  # the notified turn too
    rollout.write_bytes(kept)
    later = memdir("hook", "codex", notification(**{"last-assistant-message": LAST_REPLY}))
    assert "0 messages added, 4 known" in later.stderr, later.stderr
    assert len(set(transcript_texts(home))) == len(transcript_texts(home)) == 4
