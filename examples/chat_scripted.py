"""The memory cycle of `memdir chat`, driven from Python by a scripted model.

A `ScriptedChatModel` stands in for a real LLM: its `reply` function reads the
conversation and answers with tool calls or text. In the first session the user
names their cat and the "model" saves it with memory_save; `/new` ends the
session; in the second the user asks, the "model" calls memory_recall and
answers from what the tool returned. Nothing leaves the machine.

    python examples/chat_scripted.py [HOME]     # default: a temporary directory
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from memdir import Memory
from memdir.agent import ChatAgent
from memdir.embeddings.base import HashEmbedder
from memdir.llm import Completion, Message, ScriptedChatModel, ToolCall, ToolSpec


def reply(
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None,
    schema: Mapping[str, Any] | None,
) -> str | Completion:
    """A tiny "model": save what the user tells, recall what the user asks."""
    last = messages[-1]
    if last.role == "tool" and last.name == "memory_recall":
        found = re.search(r"cat's name is (\w+)", last.content)  # read the tool result
        return f"Your cat is called {found.group(1)}." if found else "I could not find that."
    if last.role == "tool":
        return "Got it, I saved that."
    text = last.content
    if "my cat's name is" in text.lower():
        call = ToolCall("call-save", "memory_save", {"content": text, "category": "fact"})
        return Completion("", tool_calls=(call,), finish_reason="tool_calls")
    if "cat called" in text.lower():
        call = ToolCall("call-recall", "memory_recall", {"query": "cat name"})
        return Completion("", tool_calls=(call,), finish_reason="tool_calls")
    return "Hello! Tell me something worth remembering."


def main(home: str) -> None:
    model = ScriptedChatModel(reply, model="example")
    # chat_model=None: curation (flush, session notes, extraction) uses the heuristics.
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        with ChatAgent(memory, model) as agent:
            for text in ("Hi there!", "My cat's name is Whiskerino."):
                print(f"you> {text}\nagent> {agent.send(text).reply}")
            note = agent.new_session()  # what /new does
            print(f"-- /new: session note {note.path if note else '(none)'}")
            turn = agent.send("What is my cat called?")
            for run in turn.tool_runs:
                print(f"   tool {run.call.name} returned: {run.result.splitlines()[0]}")
            print(f"you> What is my cat called?\nagent> {turn.reply}")
    print(f"memory kept in {home}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="memdir-chat-"))
