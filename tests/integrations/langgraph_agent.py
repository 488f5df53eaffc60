"""One run of a real LangGraph agent whose store is memdir: ``python langgraph_agent.py HOME
save|recall``. Printed: the graph's messages as JSON lines (type, content).

The agent is LangGraph's prebuilt ``create_react_agent`` with two tools that receive the
store the graph was compiled with (``InjectedStore``); its model is LangChain's own
scripted chat model (``FakeMessagesListChatModel``), so no network: ``save`` calls
``save_memory``, ``recall`` calls ``search_memory``, each then answers. Run as two
processes, the second finds what the first saved.
"""

from __future__ import annotations

import json
import sys
import uuid
import warnings
from typing import Annotated, Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.base import BaseStore

from memdir import Memory
from memdir.integrations.langgraph import MemdirStore

NAMESPACE = ("memories", "user-1")


class ScriptedChatModel(FakeMessagesListChatModel):
    """LangChain's scripted model, taking tools as an agent binds them (it ignores them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self


@tool
def save_memory(text: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Remember something about the user for later conversations."""
    store.put(NAMESPACE, uuid.uuid4().hex, {"text": text})
    return "saved"


@tool
def search_memory(query: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Search what you remember about the user."""
    found = store.search(NAMESPACE, query=query, limit=3)
    return "\n".join(item.value["text"] for item in found) or "nothing remembered"


SCRIPTS: dict[str, tuple[str, list[BaseMessage]]] = {
    "save": (
        "I'm vegetarian and allergic to peanuts.",
        [
            AIMessage("", tool_calls=[{
                "name": "save_memory", "id": "call-1",
                "args": {"text": "The user is vegetarian and allergic to peanuts."},
            }]),
            AIMessage("Noted: vegetarian, no peanuts."),
        ],
    ),
    "recall": (
        "Plan a dinner for me.",
        [
            AIMessage("", tool_calls=[{
                "name": "search_memory", "id": "call-2",
                "args": {"query": "what food can the user eat"},
            }]),
            AIMessage("A vegetarian curry without peanuts."),
        ],
    ),
}  # fmt: skip


def main(home: str, step: str) -> None:
    warnings.simplefilter("ignore")  # create_react_agent's notice of its move to langchain
    question, responses = SCRIPTS[step]
    with Memory.open(home) as memory:
        memory.init()
        agent = create_react_agent(
            ScriptedChatModel(responses=responses),
            [save_memory, search_memory],
            store=MemdirStore(memory),
        )
        state = agent.invoke({"messages": [("user", question)]})
    for message in state["messages"]:
        print(json.dumps({"type": message.type, "content": message.content}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
