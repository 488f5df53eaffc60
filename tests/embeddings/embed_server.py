"""A small embeddings server on 127.0.0.1, run in a thread, speaking three APIs.

By default it answers with fixed 4-number vectors derived from each input
(``vector_for``): ``POST /v1/embeddings`` as OpenAI and Voyage AI do (``data[i].embedding``),
and ``POST /v1beta/models/<model>:batchEmbedContents`` as Google's Gemini API does
(``embeddings[i].values``). A test may queue canned answers (status, raw body, headers,
delay) that are served first, one per request. Every request is recorded with its path,
headers and decoded JSON body.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def vector_for(text: str) -> list[float]:
    """The fixed, not normalised, vector the server returns for ``text``."""
    return [float(len(text)), 1.0, 0.0, 2.0 if "cat" in text else -2.0]


def _gemini_answer(body: Any) -> Canned:
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list):
        return Canned(status=400, body={"error": {"code": 400, "message": "no requests"}})
    texts = [request["content"]["parts"][0]["text"] for request in requests]
    return Canned(body={"embeddings": [{"values": vector_for(text)} for text in texts]})


@dataclass(frozen=True)
class Canned:
    status: int = 200
    body: bytes | Any = None  # bytes are sent raw; anything else as JSON
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: Any


class EmbeddingsServer:
    def __init__(self) -> None:
        self.canned: deque[Canned] = deque()
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def queue(self, *answers: Canned) -> None:
        self.canned.extend(answers)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _answer(self, path: str, headers: dict[str, str], raw: bytes) -> Canned:
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        with self._lock:
            self.received.append(Received(path, headers, body))
            if self.canned:
                return self.canned.popleft()
        if path.startswith("/v1beta/models/") and path.endswith(":batchEmbedContents"):
            return _gemini_answer(body)
        if path != "/v1/embeddings" or not isinstance(body, dict):
            return Canned(status=404, body={"error": {"message": f"no route {path}"}})
        data = [
            {"object": "embedding", "index": n, "embedding": vector_for(text)}
            for n, text in enumerate(body["input"])
        ]
        return Canned(body={"object": "list", "data": data, "model": body["model"]})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {key.lower(): value for key, value in self.headers.items()}
                answer = server._answer(self.path, headers, raw)
                time.sleep(answer.delay)
                if isinstance(answer.body, bytes):
                    payload = answer.body
                else:
                    payload = json.dumps(answer.body).encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass  # keep the test output clean

        return Handler
