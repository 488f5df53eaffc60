"""``MemdirSession``: the OpenAI Agents SDK's ``Session`` protocol over a memdir transcript.

The contract tests follow the SDK's own session tests (tests/memory/test_session.py) and run
against its ``SQLiteSession`` too, so each assertion is the SDK's behaviour. The model is
the SDK's ``agents.testing.ScriptedModel``; tracing is off (nothing leaves the machine).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    Runner,
    Session,
    SessionSettings,
    SQLiteSession,
    UserError,
    set_tracing_disabled,
)
from agents.testing import ScriptedModel, assistant_message

from memdir import Memory
from memdir.embeddings.base import HashEmbedder
from memdir.integrations.openai_agents import CredentialRefusedError, MemdirSession

AWS_KEY = "AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.fixture(autouse=True)
def _no_tracing() -> Iterator[None]:
    set_tracing_disabled(True)
    yield
    set_tracing_disabled(False)


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as opened:
        opened.init()
        yield opened


@pytest.fixture(params=["memdir", "sqlite"])
def make_session(request: pytest.FixtureRequest, memory: Memory, tmp_path: Path) -> Any:
    def make(session_id: str, settings: Any = None) -> Session:
        if request.param == "memdir":
            return MemdirSession(session_id, memory, session_settings=settings)
        return SQLiteSession(session_id, tmp_path / "sdk.db", session_settings=settings)

    return make


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


# -- the SDK's contract ------------------------------------------------------------------
@pytest.mark.parametrize("method", ["run", "run_sync", "run_streamed"])
def test_a_runner_sees_the_history(make_session: Any, method: str) -> None:
    session = make_session("golden-gate")
    model = ScriptedModel([[assistant_message("San Francisco")], [assistant_message("CA")]])
    agent = Agent(name="test", model=model)
    assert _run(method, agent, "What city is the Golden Gate Bridge in?", session) == (
        "San Francisco"
    )
    assert _run(method, agent, "What state is it in?", session) == "CA"
    sent = model.last_call.input if model.last_call else []
    assert [item.get("role") for item in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"] == "What city is the Golden Gate Bridge in?"
    assert len(run(session.get_items())) == 4


def test_sessions_are_separate(make_session: Any) -> None:
    one, two = make_session("one"), make_session("two")
    run(one.add_items([user("first")]))
    run(two.add_items([user("second"), user("third")]))
    assert run(one.get_items()) == [user("first")]
    assert run(two.get_items()) == [user("second"), user("third")]


def test_add_get_pop_clear(make_session: Any) -> None:
    session = make_session("direct")
    assert run(session.get_items()) == []
    assert run(session.pop_item()) is None
    items: list[Any] = [
        user("Hello"),
        {"role": "assistant", "content": "Hi there!"},
        {"type": "function_call", "call_id": "c1", "name": "look", "arguments": '{"q": "x"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "found"},
    ]
    run(session.add_items(items))
    run(session.add_items([]))
    assert run(session.get_items()) == items
    assert run(session.get_items(limit=2)) == items[2:]
    assert run(session.get_items(limit=0)) == []
    assert run(session.get_items(limit=10)) == items
    assert run(session.pop_item()) == items[-1]
    assert run(session.get_items()) == items[:-1]
    run(session.clear_session())
    assert run(session.get_items()) == []
    assert run(session.pop_item()) is None
    run(session.add_items([user("again")]))
    assert run(session.get_items()) == [user("again")]


def test_session_settings_limit(make_session: Any) -> None:
    session = make_session("limited", SessionSettings(limit=2))
    run(session.add_items([user(f"m{i}") for i in range(5)]))
    assert run(session.get_items()) == [user("m3"), user("m4")]
    assert run(session.get_items(limit=3)) == [user("m2"), user("m3"), user("m4")]


def test_session_settings_may_be_a_dictionary(make_session: Any) -> None:
    session = make_session("dict-settings", {"limit": 1})
    assert session.session_settings == SessionSettings(limit=1)
    with pytest.raises(TypeError, match="Unknown session settings: limitt"):
        make_session("bad-settings", {"limitt": 1})


def test_unicode_and_odd_content(make_session: Any) -> None:
    session = make_session("unicode")
    items = [user("こんにちは 😊 — naïve"), user("'; DROP TABLE messages; --"), user("a\nb\x00c")]
    run(session.add_items(items))
    assert run(session.get_items()) == items


def test_threads_appending_at_once_lose_nothing(make_session: Any) -> None:
    session = make_session("busy")

    def add(worker: int) -> None:
        for i in range(20):
            asyncio.run(session.add_items([user(f"{worker}-{i}")]))

    threads = [threading.Thread(target=add, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    contents = [item["content"] for item in run(session.get_items())]
    assert sorted(contents) == sorted(f"{w}-{i}" for w in range(4) for i in range(20))


# -- what memdir adds --------------------------------------------------------------------
def test_the_transcript_is_memdir_session_data(memory: Memory) -> None:
    session = MemdirSession("trip", memory)
    model = ScriptedModel([[assistant_message("Noted: you are vegetarian.")]])
    _run_sync(Agent(name="a", model=model), "I'm vegetarian.", session)
    transcript = memory.session("trip").load()
    assert [(m.message.role, m.message.content) for m in transcript.current()] == [
        ("user", "I'm vegetarian."), ("assistant", "Noted: you are vegetarian."),
    ]  # fmt: skip
    assert [info.session_id for info in memory.sessions()] == ["trip"]
    note = memory.end_session("trip")  # curation reads the same transcript
    assert note is not None
    assert "vegetarian" in memory.read_file(note.path)


def test_pops_and_clears_are_recorded_not_erased(memory: Memory) -> None:
    session = MemdirSession("audit", memory)
    run(session.add_items([user("one"), user("two")]))
    run(session.pop_item())
    run(session.clear_session())
    transcript = memory.session("audit").load()
    assert [m.message.content for m in transcript.messages] == ["one", "two"]
    assert [c.method for c in transcript.compactions] == ["agents-pop", "agents-clear"]
    assert transcript.current() == []


def test_a_compaction_summary_reads_as_a_user_message(memory: Memory) -> None:
    session = MemdirSession("compacted", memory)
    run(session.add_items([user("one"), user("two"), user("three")]))
    ids = [m.id for m in memory.session("compacted").load().current()]
    memory.session("compacted").record_compaction(summary="Earlier: one, two", replaced_ids=ids[:2])
    assert run(session.get_items()) == [user("Earlier: one, two"), user("three")]


def test_a_credential_is_refused_with_the_sdks_error(memory: Memory) -> None:
    session = MemdirSession("keys", memory)
    run(session.add_items([user("hello")]))
    with pytest.raises(UserError, match="AWS access key") as caught:
        run(session.add_items([user("fine"), user(f"my key is {AWS_KEY}")]))
    assert isinstance(caught.value, CredentialRefusedError)
    assert run(session.get_items()) == [user("hello")]  # the whole batch was refused
    agent = Agent(name="a", model=ScriptedModel([[assistant_message("ok")]]))
    with pytest.raises(UserError):
        _run_sync(agent, f"store this: {AWS_KEY}", session)
    assert AWS_KEY not in memory.session("keys").path.read_text()


def test_a_bad_session_id_names_the_rule(memory: Memory) -> None:
    with pytest.raises(UserError, match="letters, digits"):
        MemdirSession("../escape", memory)


# -- a real Runner, two processes --------------------------------------------------------
@pytest.mark.slow
def test_a_runner_remembers_across_processes(tmp_path: Path) -> None:
    home = tmp_path / "agents-home"
    first = _run_process(home, "first")
    assert first["final_output"].startswith("Your order 4821")
    second = _run_process(home, "second")
    sent = second["model_input"]
    assert sent[0] == {"role": "user", "content": "My order is 4821 and I live in Lisbon."}
    assert [item.get("type") for item in sent[1:3]] == ["function_call", "function_call_output"]
    assert sent[2]["output"] == "order 4821: one blue bicycle, shipped"
    assert "has shipped to Lisbon" in json.dumps(sent[3])
    assert sent[-1] == {"role": "user", "content": "Where do I live, and what did I order?"}


def _run_process(home: Path, step: str) -> dict[str, Any]:
    script = Path(__file__).with_name("openai_agents_run.py")
    done = subprocess.run(
        [sys.executable, str(script), str(home), "support-42", step],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _run(method: str, agent: Agent[Any], text: str, session: Session) -> Any:
    if method == "run":
        return asyncio.run(Runner.run(agent, text, session=session)).final_output
    if method == "run_sync":
        return _run_sync(agent, text, session).final_output

    async def streamed() -> Any:
        result = Runner.run_streamed(agent, text, session=session)
        async for _ in result.stream_events():
            pass
        return result.final_output

    return asyncio.run(streamed())


def _run_sync(agent: Agent[Any], text: str, session: Session) -> Any:
    """``Runner.run_sync`` on a loop of its own, closed after (as the SDK's tests run it)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return Runner.run_sync(agent, text, session=session)
    finally:
        loop.close()
        asyncio.set_event_loop(None)


WRITER = """
import asyncio, sys
from memdir import Memory
from memdir.embeddings.base import HashEmbedder
from memdir.integrations.openai_agents import MemdirSession

with Memory.open(sys.argv[1], embedder=HashEmbedder(), chat_model=None) as memory:
    session = MemdirSession("shared", memory)
    for i in range(int(sys.argv[3])):
        asyncio.run(session.add_items([{"role": "user", "content": f"{sys.argv[2]}-{i}"}]))
        if i % 10 == 9:
            asyncio.run(session.pop_item())
"""


@pytest.mark.slow
def test_two_processes_share_a_session(tmp_path: Path, memory: Memory) -> None:
    """Two processes append 100 items each and pop every tenth: 180 stay, none torn."""
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(memory.home), name, "100"])
        for name in ("a", "b")
    ]
    assert [writer.wait(timeout=240) for writer in writers] == [0, 0]
    items = run(MemdirSession("shared", memory).get_items())
    assert len(items) == 180
    kept = {item["content"] for item in items}
    assert len(kept) == 180
    transcript = memory.session("shared").load()
    assert transcript.skipped_lines == 0
    assert len(transcript.messages) == 200
