"""A CAMEL-style agent memory on memdir, end to end, offline.

Runs with the hash embedder and a scripted chat model (no network, no API key):

    python examples/camel_memory.py                # in a temporary MEMDIR_HOME
    python examples/camel_memory.py --home ./demo  # keep the files to look at them

1. An agent talks with a LongtermAgentMemory: recent turns in a session
   transcript, every turn also appended to today's daily note.
2. The model calls the ``remember`` tool of the MemoryToolkit; the fact lands in
   the daily note and the facts store.
3. "Restart": a fresh Memory reloads the conversation from its session, finds the
   turns with memdir search (cited as path:start-end) and recalls the fact.
Swap ``HashEmbedder`` for the configured embedder and ``ScriptedChatModel`` for a
real model (``memdir.llm.create_chat_model``) to use it for real.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from memdir.camel import (
    ChatHistoryBlock,
    LongtermAgentMemory,
    MemoryRecord,
    MemoryToolkit,
    ScoreBasedContextCreator,
    VectorDBBlock,
)
from memdir.embeddings.base import HashEmbedder
from memdir.llm import ChatModel, Completion, Message, ScriptedChatModel, ToolCall
from memdir.memory import Memory

AGENT = "travel-bot"
SESSION = "lisbon-trip"


def build_agent_memory(memory: Memory) -> LongtermAgentMemory:
    return LongtermAgentMemory(
        context_creator=ScoreBasedContextCreator(token_limit=1_024),
        chat_history=ChatHistoryBlock.open(memory, SESSION, max_records=50),
        vector_db=VectorDBBlock(memory),
        retrieve_limit=3,
    )


def run_turn(
    agent: LongtermAgentMemory, toolkit: MemoryToolkit, model: ChatModel, user_text: str
) -> str:
    """One user turn: the model may call memory tools, then answers."""
    agent.write_record(MemoryRecord.create(user_text, "user", importance=6))
    tools = [tool.to_tool_spec() for tool in toolkit.get_tools()]
    for _ in range(4):  # at most a few tool rounds
        messages, tokens = agent.get_context()
        print(f"  [context: {len(messages)} messages, {tokens} tokens]")
        completion = model.complete(messages, tools=tools)
        agent.write_record(MemoryRecord.create(completion.to_message()))
        if not completion.tool_calls:
            return completion.text
        for call in completion.tool_calls:
            result = toolkit.call(call.name, call.arguments)
            print(f"  [tool {call.name}] {result.splitlines()[0]}")
            reply = Message("tool", result, tool_call_id=call.id, name=call.name)
            agent.write_record(MemoryRecord.create(reply))
    return completion.text


def main(home: Path) -> None:
    model = ScriptedChatModel(
        [
            Completion(
                "",
                tool_calls=(
                    ToolCall(
                        "call-1",
                        "remember",
                        {"content": "The user is allergic to peanuts", "importance": 9},
                    ),
                ),
            ),
            "Noted: no peanuts. I will pick restaurants in Alfama that can cook without them.",
        ]
    )
    print(f"MEMDIR_HOME: {home}")
    with Memory.open(home, AGENT, embedder=HashEmbedder(), chat_model=None) as memory:
        agent = build_agent_memory(memory)
        agent.write_record(
            MemoryRecord.create("You are a travel assistant with memory.", "system", importance=10)
        )
        toolkit = MemoryToolkit(memory, agent)
        question = "Plan dinner in Lisbon. Remember that I am allergic to peanuts."
        print(f"user: {question}")
        print(f"assistant: {run_turn(agent, toolkit, model, question)}")

    print("\n-- restart --")
    with Memory.open(home, AGENT, embedder=HashEmbedder(), chat_model=None) as memory:
        agent = build_agent_memory(memory)
        print(f"reloaded {len(agent.chat_history)} records from session {SESSION!r}")
        hits = memory.search("peanuts restaurants Alfama", max_results=3)
        for hit in hits:
            print(f"search hit {hit.citation} score {hit.score:.3f}")
        print(MemoryToolkit(memory).call("recall", {"query": "allergies peanuts"}))
        messages, tokens = agent.get_context()
        print(f"context after restart: {len(messages)} messages, {tokens} tokens")
        for message in messages:
            print(f"  {message.role}: {message.content.splitlines()[0] if message.content else ''}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="MEMDIR_HOME to use (default: a temp dir)")
    args = parser.parse_args()
    if args.home is not None:
        main(args.home)
    else:
        with tempfile.TemporaryDirectory(prefix="memdir-camel-") as temp:
            main(Path(temp))
