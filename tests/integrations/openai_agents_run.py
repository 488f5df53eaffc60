"""One turn of a real OpenAI Agents SDK ``Runner`` whose session is memdir:
``python openai_agents_run.py HOME SESSION_ID first|second``. Printed: one JSON object with
the final output and the input the model received.

The model is the SDK's own ``agents.testing.ScriptedModel`` (no network). ``first`` tells
the agent a fact and calls a tool once; ``second``, a new process, asks about it: the SDK
sends the model the history it read from the session, which is what the test checks.
"""

from __future__ import annotations

import json
import sys

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from memdir import Memory
from memdir.integrations.openai_agents import MemdirSession


@function_tool
def remember_order(order_id: str) -> str:
    """Look up an order."""
    return f"order {order_id}: one blue bicycle, shipped"


STEPS = {
    "first": (
        "My order is 4821 and I live in Lisbon.",
        [
            [function_call("remember_order", {"order_id": "4821"}, call_id="call-1")],
            [assistant_message("Your order 4821 (a blue bicycle) has shipped to Lisbon.")],
        ],
    ),
    "second": ("Where do I live, and what did I order?", [[assistant_message("Lisbon; a bike.")]]),
}


def main(home: str, session_id: str, step: str) -> None:
    set_tracing_disabled(True)  # nothing leaves the machine
    question, steps = STEPS[step]
    model = ScriptedModel(steps)
    agent = Agent(name="support", instructions="Help the customer.", model=model,
                  tools=[remember_order])  # fmt: skip
    with Memory.open(home) as memory:
        memory.init()
        result = Runner.run_sync(agent, question, session=MemdirSession(session_id, memory))
    sent = model.last_call.input if model.last_call else None
    print(json.dumps({"final_output": result.final_output, "model_input": sent}, default=str))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
