"""The real OpenAI-compatible client against a local HTTP server: a context-length error
from the server leads to emergency compaction (no model call for it), then one retry.

The server counts tokens more harshly than memdir's estimate (as a real tokenizer may, for
code or CJK): it refuses requests over ``LIMIT_CHARS`` characters, below the point where
memdir's own compaction would start, so only the server's error can trigger the recovery."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memdir import Memory
from memdir.agent import ChatAgent
from memdir.embeddings.base import HashEmbedder
from memdir.llm import OpenAIChatModel

TOO_LONG = {
    "error": {
        "message": "This model's maximum context length is 4096 tokens.",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
}
LIMIT_CHARS = 9_000
REPLY = {
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 1},
}


class _Handler(BaseHTTPRequestHandler):
    bodies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.bodies.append(body)
        size = sum(len(m.get("content") or "") for m in body["messages"])
        status, answer = (400, TOO_LONG) if size > LIMIT_CHARS else (200, REPLY)
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    _Handler.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host!s}:{port}/v1", _Handler.bodies
    server.shutdown()
    server.server_close()


def test_context_length_error_triggers_emergency_compaction(
    home: Path, endpoint: tuple[str, list[dict[str, Any]]]
) -> None:
    url, bodies = endpoint
    model = OpenAIChatModel("local-model", base_url=url, context_window=4096, max_retries=0)
    (home / "workspace").mkdir(parents=True)  # an empty home
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        agent = ChatAgent(memory, model)
        for n in range(30):
            turn = agent.send(f"note {n}: " + "lorem ipsum " * 58)
            if any(event.kind == "emergency" for event in turn.events):
                break
        else:
            pytest.fail("the server never refused a request: the test proves nothing")
        agent.close(timeout=5)
    assert turn.reply == "ok"
    refused, retried = bodies[-2], bodies[-1]
    assert sum(len(m.get("content") or "") for m in refused["messages"]) > LIMIT_CHARS
    assert len(retried["messages"]) < len(refused["messages"])
    assert retried["messages"][-1]["content"] == refused["messages"][-1]["content"]
    assert retried["messages"][0]["role"] == "system"
