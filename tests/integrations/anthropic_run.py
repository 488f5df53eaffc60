"""One run of the Anthropic SDK's tool runner with memdir as Claude's memory tool:
``python anthropic_run.py HOME TOOL_INPUT_JSON``. Printed: one JSON object with the tools
sent, the tool result and the final text.

The model is a mock transport (no network): its first answer asks for one ``memory`` tool
use (``TOOL_INPUT_JSON``), its second says "done". Run as two processes, the second reads
what the first wrote.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import httpx2 as httpx  # the HTTP client the SDK uses (httpx's API)
from anthropic import Anthropic

from memdir.embeddings.base import HashEmbedder
from memdir.integrations.anthropic import MemdirMemoryTool
from memdir.memory import Memory


def answer(index: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": f"msg_{index}", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": content, "stop_reason": stop,
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
    }  # fmt: skip


def main(home: str, tool_input: dict[str, Any]) -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        if len(sent) == 1:
            use = {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": tool_input}
            return httpx.Response(200, json=answer(len(sent), [use], "tool_use"))
        done = [{"type": "text", "text": "done"}]
        return httpx.Response(200, json=answer(len(sent), done, "end_turn"))

    client = Anthropic(
        api_key="test-key", base_url="http://model.test",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )  # fmt: skip
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-4-5", max_tokens=256, tools=[MemdirMemoryTool(memory)],
            messages=[{"role": "user", "content": "hello"}],
        )  # fmt: skip
        final = runner.until_done()
    results = [
        block for block in sent[-1]["messages"][-1]["content"]
        if block.get("type") == "tool_result"
    ]  # fmt: skip
    print(json.dumps({"tools": sent[0]["tools"], "result": results[0],
                      "final": final.content[0].text}))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))
