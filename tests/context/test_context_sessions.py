"""Session transcripts: JSONL round-trips, locking, torn lines, id validation."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memdir.context import (
    ContextPolicy,
    Session,
    SessionMessage,
    compact,
    emergency_compact,
    list_sessions,
    new_session_id,
    record_compaction,
    validate_session_id,
)
from memdir.errors import InvalidAgentIdError, InvalidInputError, NotFoundError
from memdir.llm import Message, ScriptedChatModel, ToolCall

FIXED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_messages_round_trip_with_tool_calls_ids_and_timestamps(home: Path) -> None:
    session = Session(home, "s1", agent_id="helper", clock=lambda: FIXED)
    call = ToolCall("call-1", "memory_search", {"query": "tea", "max_results": 3})
    written = session.extend(
        [
            Message("user", "What do I like? ünïcödé"),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "tea", tool_call_id="call-1", name="memory_search"),
        ]
    )
    last = session.append(Message("assistant", "You like tea."), message_id="final")

    assert session.path == home / "sessions" / "helper" / "s1.jsonl"
    transcript = session.load()
    assert transcript.messages == (*written, last)
    assert transcript.skipped_lines == 0
    assert transcript.messages[1].message.tool_calls == (call,)
    assert transcript.messages[2].message.tool_call_id == "call-1"
    assert transcript.messages[0].timestamp == FIXED
    assert last.id == "final"
    assert len({m.id for m in transcript.messages}) == 4


def test_global_sessions_live_under_global(home: Path) -> None:
    session = Session(home, "abc")
    session.append(Message("user", "hi"))
    assert session.path == home / "sessions" / "global" / "abc.jsonl"


@pytest.mark.parametrize(
    "bad",
    ["", "../escape", "..", "a/b", "/abs", ".hidden", "a\x00b", "a b", "x" * 129, "a.jsonl", "é"],
)
def test_path_tricks_in_session_ids_are_rejected(home: Path, bad: str) -> None:
    with pytest.raises(InvalidInputError, match="session id"):
        Session(home, bad)
    with pytest.raises(InvalidInputError):
        validate_session_id(bad)


@pytest.mark.parametrize("bad", ["../x", "UPPER", "", "a/b", "-lead"])
def test_bad_agent_ids_are_rejected(home: Path, bad: str) -> None:
    with pytest.raises(InvalidAgentIdError):
        Session(home, "ok", agent_id=bad)


def test_new_session_ids_are_valid_and_unique() -> None:
    ids = {new_session_id() for _ in range(50)}
    assert len(ids) == 50
    for session_id in ids:
        assert validate_session_id(session_id) == session_id


def test_loading_a_missing_session_names_the_next_step(home: Path) -> None:
    with pytest.raises(NotFoundError, match="append a message"):
        Session(home, "nope").load()


def test_a_torn_last_line_is_skipped_and_logged(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session = Session(home, "torn")
    session.extend([Message("user", "one"), Message("assistant", "two")])
    with session.path.open("ab") as handle:
        handle.write(b'{"type": "message", "id": "x", "role": "us')

    with caplog.at_level(logging.WARNING, logger="memdir.context.sessions"):
        transcript = session.load()

    assert [m.message.content for m in transcript.messages] == ["one", "two"]
    assert transcript.skipped_lines == 1
    assert "torn last line" in caplog.text


def test_an_append_after_a_torn_line_starts_on_a_fresh_line(home: Path) -> None:
    session = Session(home, "torn")
    session.append(Message("user", "one"))
    with session.path.open("ab") as handle:
        handle.write(b'{"type": "mess')
    session.append(Message("user", "three"))

    transcript = session.load()
    assert [m.message.content for m in transcript.messages] == ["one", "three"]
    assert transcript.skipped_lines == 1


def test_unreadable_middle_lines_do_not_lose_the_rest(home: Path) -> None:
    session = Session(home, "mixed")
    session.append(Message("user", "one"))
    with session.path.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "message", "role": "wizard", "content": "x", "id": "1", ')
        handle.write('"timestamp": "2025-01-01T00:00:00+00:00"}\n[1, 2]\n{"type": "nope"}\n')
    session.append(Message("user", "two"))
    transcript = session.load()
    assert [m.message.content for m in transcript.messages] == ["one", "two"]
    assert transcript.skipped_lines == 3


def test_list_sessions_per_agent(home: Path) -> None:
    assert list_sessions(home) == []
    Session(home, "a1").append(Message("user", "x"))
    Session(home, "a2").append(Message("user", "y"))
    Session(home, "b1", agent_id="bot").append(Message("user", "z"))
    (home / "sessions" / "global" / "notes.txt").write_text("not a session")

    assert {info.session_id for info in list_sessions(home)} == {"a1", "a2"}
    (info,) = list_sessions(home, "bot")
    assert (info.session_id, info.agent_id, info.size_bytes > 0) == ("b1", "bot", True)


def test_compactions_are_recorded_and_replayed(home: Path) -> None:
    session = Session(home, "c1")
    system = Message("system", "be brief")
    stored = session.extend(
        [Message("user" if n % 2 == 0 else "assistant", f"turn {n}") for n in range(8)]
    )
    messages = [system, *(s.message for s in stored)]
    ids: list[str | None] = [None, *(s.id for s in stored)]

    result = compact(messages, model=ScriptedChatModel(["short summary"]), flush=None)
    new_ids = record_compaction(session, result, ids)

    transcript = session.load()
    (record,) = transcript.compactions
    assert record.replaced_ids == tuple(s.id for s in stored[:4])
    assert record.summary == result.messages[1].content
    assert record.method == "model"
    assert len(transcript.messages) == 8  # the audit trail keeps every message
    current = transcript.current()
    assert [m.message for m in current] == list(result.messages[1:])
    assert [m.id for m in current] == new_ids[1:]
    assert new_ids[0] is None
    raw = [json.loads(line) for line in session.path.read_text("utf-8").splitlines()]
    assert raw[-1]["type"] == "compaction"


def test_a_second_compaction_replaces_the_first_summary(home: Path) -> None:
    session = Session(home, "c2")
    stored = session.extend([Message("user", f"m{n}") for n in range(6)])
    ids: list[str | None] = [s.id for s in stored]
    messages = [s.message for s in stored]
    policy = ContextPolicy(preserve_recent_messages=2)
    model = ScriptedChatModel(["one", "two"])

    first = compact(messages, model=model, flush=None, policy=policy)
    ids = record_compaction(session, first, ids)
    later = session.extend([Message("user", "m6"), Message("user", "m7")])
    messages = [*first.messages, *(s.message for s in later)]
    ids = [*ids, *(s.id for s in later)]
    second = compact(messages, model=model, flush=None, policy=policy)
    ids = record_compaction(session, second, ids)

    current = session.load().current()
    assert [m.message for m in current] == list(second.messages)
    assert [m.id for m in current] == ids
    assert second.messages[0].content.endswith("two")


def test_record_compaction_checks_the_ids(home: Path) -> None:
    messages = [Message("user", f"m{n}") for n in range(6)]
    result = compact(messages, model=None, flush=None)
    with pytest.raises(InvalidInputError, match="one id per message"):
        record_compaction(Session(home, "x"), result, ["a", "b"])


WRITER = """
import sys
from pathlib import Path
from memdir.context import Session
from memdir.llm import Message

home, writer, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
session = Session(home, "shared")
padding = writer * 9000  # far beyond PIPE_BUF: only the lock keeps lines whole
for n in range(count):
    session.append(Message("user", f"{writer}:{n}:{padding}"), message_id=f"{writer}-{n}")
"""


@pytest.mark.slow
def test_concurrent_appends_from_processes_never_interleave(home: Path) -> None:
    writers, count = "abcd", 60
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(home), w, str(count)]) for w in writers
    ]
    for process in processes:
        assert process.wait(timeout=120) == 0

    transcript = Session(home, "shared").load()
    assert transcript.skipped_lines == 0
    assert len(transcript.messages) == len(writers) * count
    for writer in writers:
        mine = [m for m in transcript.messages if m.id.startswith(f"{writer}-")]
        assert [m.id for m in mine] == [f"{writer}-{n}" for n in range(count)]
        assert all(m.message.content.endswith(writer * 9000) for m in mine)
    assert all(isinstance(entry, SessionMessage) for entry in transcript.entries)


def test_an_emergency_drop_is_recorded_and_replayed(home: Path) -> None:
    session = Session(home, "e1")
    stored = session.extend(
        [
            Message("user" if n % 2 == 0 else "assistant", f"turn {n} " + "z" * 400)
            for n in range(10)
        ]
    )
    ids: list[str | None] = [s.id for s in stored]
    result = emergency_compact(
        [s.message for s in stored], ContextPolicy(max_input_tokens=600), flush=None
    )
    new_ids = record_compaction(session, result, ids)

    transcript = session.load()
    (record,) = transcript.compactions
    assert record.method == "dropped"
    assert record.replaced_ids == tuple(ids[i] for i in result.dropped_indices)
    assert [m.message for m in transcript.current()] == list(result.messages)
    assert [m.id for m in transcript.current()] == new_ids
