"""A tiny scripted HTTP server on 127.0.0.1 that the real providers talk to.

Each test queues the answers it wants (status, JSON body, headers, delay); the
server records every request it receives (path, headers, decoded JSON body).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class CannedAnswer:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


class ScriptedServer:
    """Answers POSTs from a queue; when the queue is empty, from ``fallback``."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.fallback: CannedAnswer | None = None
        self.stopping = threading.Event()
        self._queue: list[CannedAnswer] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def answer(
        self,
        body: Any = None,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue one answer."""
        with self._lock:
            self._queue.append(CannedAnswer(status, body, headers or {}, delay))

    def always(self, body: Any = None, *, status: int = 200, delay: float = 0.0) -> None:
        """Answer every request not covered by the queue like this."""
        self.fallback = CannedAnswer(status, body, {}, delay)

    def next_answer(self, request: RecordedRequest) -> CannedAnswer:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.pop(0)
        if self.fallback is not None:
            return self.fallback
        return CannedAnswer(599, {"error": {"message": "test server has no answer queued"}})

    def _serve(self) -> None:
        self._httpd.serve_forever(poll_interval=0.02)  # a short poll keeps stop() quick

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            recorded = RecordedRequest(
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=json.loads(raw) if raw else None,
            )
            canned = server.next_answer(recorded)
            if canned.delay and server.stopping.wait(canned.delay):
                return
            payload = (
                canned.body.encode()
                if isinstance(canned.body, str)
                else json.dumps(canned.body).encode()
            )
            try:
                self.send_response(canned.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in canned.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client gave up (timeout test); nothing to answer
                pass

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

    return Handler


def openai_answer(
    content: str | None = "Hello!",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }


def anthropic_answer(
    blocks: list[dict[str, Any]] | None = None, *, stop_reason: str = "end_turn"
) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": blocks if blocks is not None else [{"type": "text", "text": "Hello!"}],
        "stop_reason": stop_reason,
        "usage": {"input_tokens": 20, "output_tokens": 5},
    }
