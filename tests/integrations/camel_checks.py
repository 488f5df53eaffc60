"""camel-ai's ``ChatAgent`` on ``MemdirChatMemory``, run in ``.venv-camel`` (camel-ai needs
mcp 1; scripts/setup-camel makes that environment). ``python camel_checks.py HOME CHECK``
runs one check and prints a JSON object; ``test_camel_agent.py`` runs each and asserts.

The model is camel-ai's own ``StubModel`` (no network), recording what it is sent and
answering from a script.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from camel.agents import ChatAgent
from camel.memories import ChatHistoryMemory, MemoryRecord
from camel.messages import FunctionCallingMessage
from camel.models.stub_model import StubModel
from camel.types import ModelType, OpenAIBackendRole, RoleType

from memdir import Memory
from memdir.embeddings.base import HashEmbedder
from memdir.integrations.camel import MemdirChatMemory

SYSTEM = "You plan trips."
AWS_KEY = "AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


class ScriptedStub(StubModel):  # type: ignore[misc]
    """camel-ai's stub model, recording each request and answering ``replies`` in turn."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(ModelType.STUB)
        self.replies = list(replies)
        self.sent: list[list[dict[str, Any]]] = []

    def _run(self, messages: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        self.sent.append([dict(m) for m in messages])
        response = super()._run(messages, *args, **kwargs)
        response.choices[0].message.content = self.replies.pop(0)
        return response


def open_memory(home: str) -> Memory:
    return Memory.open(home, "camel-bot", embedder=HashEmbedder(), chat_model=None)


def agent_on(memory: Memory, model: ScriptedStub, system: str = SYSTEM, **options: Any) -> Any:
    chat = MemdirChatMemory.open(memory, "trip", model.token_counter, model.token_limit, **options)
    return ChatAgent(system, model=model, memory=chat)


def contents(agent: Any) -> list[list[str]]:
    return [
        [r.memory_record.role_at_backend.value, r.memory_record.message.content]
        for r in agent.memory.retrieve()
    ]


def first(home: str) -> dict[str, Any]:
    model = ScriptedStub(["Noted: Lisbon."])
    with open_memory(home) as memory:
        agent = agent_on(memory, model)
        reply = agent.step("I live in Lisbon.").msgs[0].content
        return {"reply": reply, "records": contents(agent)}


def second(home: str) -> dict[str, Any]:
    model = ScriptedStub(["You live in Lisbon."])
    with open_memory(home) as memory:
        agent = agent_on(memory, model)
        before = contents(agent)
        reply = agent.step("Where do I live?").msgs[0].content
        return {"reply": reply, "records_at_start": before, "model_saw": model.sent[-1]}


def contract(home: str) -> dict[str, Any]:
    """camel-ai's memory operations as ChatAgent uses them, each checked at once."""
    model = ScriptedStub(["one", "two", "three"])
    with open_memory(home) as memory:
        agent = agent_on(memory, model)
        assert isinstance(agent.memory, ChatHistoryMemory)
        for text in ("a", "b", "c"):
            agent.step(text)
        assert len(agent.memory.retrieve()) == 7
        popped = agent.memory.pop_records(2)
        assert [r.message.content for r in popped] == ["c", "three"]
        removed = agent.memory.remove_records_by_indices([0, 1])  # index 0: the system message
        assert [r.message.content for r in removed] == ["a"]
        assert [c for _, c in contents(agent)] == [SYSTEM, "one", "b", "two"]
        call = FunctionCallingMessage(
            role_name="planner", role_type=RoleType.ASSISTANT, meta_dict=None, content="",
            func_name="weather", args={"city": "Lisbon"}, tool_call_id="c1",
        )  # fmt: skip
        result = FunctionCallingMessage(
            role_name="planner", role_type=RoleType.ASSISTANT, meta_dict=None, content="",
            func_name="weather", result="sunny", tool_call_id="c1",
        )  # fmt: skip
        agent.memory.write_records([
            MemoryRecord(message=call, role_at_backend=OpenAIBackendRole.ASSISTANT),
            MemoryRecord(message=result, role_at_backend=OpenAIBackendRole.FUNCTION),
        ])  # fmt: skip
        transcript = memory.session("trip").load().current()
        assert transcript[-2].message.tool_calls[0].name == "weather"
        assert transcript[-1].message.content == "sunny"
        agent.memory.clean_tool_calls()
        assert [c for _, c in contents(agent)] == [SYSTEM, "one", "b", "two"]
        agent.reset()  # a clear after the start clears
        assert contents(agent) == [["system", SYSTEM]]
        audit = memory.session("trip").load()
        return {"messages": len(audit.messages), "methods": [c.method for c in audit.compactions]}


def restarts(home: str) -> dict[str, Any]:
    """A resumed session keeps one system message; a new one replaces it; resume=False and
    a window behave as in camel-ai."""
    with open_memory(home) as memory:
        agent_on(memory, ScriptedStub(["ok"])).step("hello")
        same = agent_on(memory, ScriptedStub([]))
        assert contents(same) == [["system", SYSTEM], ["user", "hello"], ["assistant", "ok"]]
        changed = agent_on(memory, ScriptedStub([]), system="You plan trips in Europe.")
        assert [c for _, c in contents(changed)] == ["You plan trips in Europe.", "hello", "ok"]
        windowed = agent_on(memory, ScriptedStub([]), system="You plan trips in Europe.",
                            window_size=1)  # fmt: skip
        assert [c for _, c in contents(windowed)] == ["You plan trips in Europe.", "ok"]
        fresh = agent_on(memory, ScriptedStub([]), resume=False)
        assert contents(fresh) == [["system", SYSTEM]]
        return {"ok": True}


def credentials(home: str) -> dict[str, Any]:
    with open_memory(home) as memory:
        agent = agent_on(memory, ScriptedStub(["never"]))
        try:
            agent.step(f"my key: {AWS_KEY}")
        except ValueError as exc:
            error = f"{type(exc).__name__}: {exc}"
        else:
            error = ""
        text = memory.session("trip").path.read_text()
        return {"error": error, "key_on_disk": AWS_KEY in text, "records": contents(agent)}


def compaction(home: str) -> dict[str, Any]:
    """A summary memdir records (its context window compacts sessions) reads as a record."""
    with open_memory(home) as memory:
        agent = agent_on(memory, ScriptedStub(["ok"]))
        agent.step("hello")
        ids = [m.id for m in memory.session("trip").load().current()]
        memory.session("trip").record_compaction(summary="Said hello.", replaced_ids=ids[1:])
        again = agent_on(memory, ScriptedStub([]))
        return {"records": contents(again)}


CHECKS: dict[str, Callable[[str], dict[str, Any]]] = {
    "first": first, "second": second, "contract": contract, "restarts": restarts,
    "credentials": credentials, "compaction": compaction,
}  # fmt: skip


if __name__ == "__main__":
    home, check = sys.argv[1], sys.argv[2]
    Path(home).mkdir(parents=True, exist_ok=True)
    print(json.dumps(CHECKS[check](home)))
