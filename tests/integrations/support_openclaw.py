"""OpenClaw, run for real against memdir: its CLI from ``.openclaw-env`` and a scripted model.

``scripts/setup-openclaw`` installs Node and ``openclaw`` from npm into ``.openclaw-env/``
of the checkout. OpenClaw talks to a model over the OpenAI chat-completions API; the
``ScriptedModel`` here is such an endpoint on loopback that answers each request with the
next step of a script (a tool call, or the final text), so a turn runs OpenClaw's own agent
loop, plugin loader, hooks and tool dispatch, with no model and no network.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from live_server import free_port, stop_server

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "integrations" / "openclaw"
OPENCLAW_BIN = ROOT / ".openclaw-env" / "node_modules" / ".bin"
MODEL_ID = "scripted"

Request = dict[str, Any]
Step = Callable[[Request], dict[str, Any]]
"""One model answer: given the request OpenClaw sent, an assistant message."""


def openclaw_installed() -> bool:
    return (OPENCLAW_BIN / "openclaw").exists() and (OPENCLAW_BIN / "node").exists()


def call(name: str, arguments: dict[str, Any]) -> Step:
    """A step that calls one tool."""

    def step(request: Request) -> dict[str, Any]:
        return tool_call(name, arguments)

    return step


def reply(text: str) -> Step:
    """A step that ends the turn with ``text``."""
    return lambda request: {"role": "assistant", "content": text}


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call_id = f"call_{name}_{abs(hash(json.dumps(arguments, sort_keys=True))) % 10**8}"
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": function}]}  # fmt: skip


def contents(request: Request, role: str) -> list[str]:
    """The text of each message of ``role`` in a request, in order."""
    texts = []
    for message in request["messages"]:
        if message["role"] == role:
            content = message["content"]
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content)
            texts.append(content)
    return texts


def tool_results(request: Request) -> list[Any]:
    """The JSON each tool returned, in order, as OpenClaw put it into the conversation."""
    found: list[Any] = []
    for content in contents(request, "tool"):
        try:
            found.append(json.loads(content))
        except json.JSONDecodeError:  # a tool that answers in text, such as OpenClaw's write
            found.append(content)
    return found


def last_tool_result(request: Request) -> Any:
    """What the tool called last returned."""
    return tool_results(request)[-1]


def user_text(request: Request) -> str:
    """Every user message of a request, as text (what the model was shown)."""
    return "\n".join(contents(request, "user"))


@dataclass
class ScriptedModel:
    """An OpenAI-compatible ``/v1/chat/completions`` endpoint answering from a script."""

    requests: list[Request] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *steps: Step) -> None:
        with self._lock:
            self.steps = list(steps)
            self.requests = []
            self.errors = []

    def answer(self, request: Request) -> dict[str, Any] | None:
        with self._lock:
            self.requests.append(request)
            if not self.steps:
                self.errors.append("a request came after the script ended")
                return None
            step = self.steps.pop(0)
        try:
            return step(request)
        except Exception as exc:
            seen = tool_results(request)[-1:] if request.get("messages") else []
            self.errors.append(f"{type(exc).__name__}: {exc} (after the tool result {seen})")
            return None

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            message = model.answer(body)
            if message is None:
                self.send_error(500, "the scripted model has no answer")
                return
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            if body.get("stream"):
                self._stream(message, finish)
            else:
                self._json({"id": "chatcmpl-scripted", "object": "chat.completion",
                            "model": MODEL_ID, "usage": _USAGE,
                            "choices": [{"index": 0, "message": message,
                                         "finish_reason": finish}]})  # fmt: skip

        def _stream(self, message: dict[str, Any], finish: str) -> None:
            delta = dict(message)
            if delta.get("tool_calls"):
                delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(delta["tool_calls"])]
            chunks = [
                {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": _USAGE},
            ]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in chunks:
                chunk.update(id="chatcmpl-scripted", object="chat.completion.chunk", model=MODEL_ID)
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

        def _json(self, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

    return Handler


_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


@dataclass
class OpenClaw:
    """OpenClaw with its own home (``~/.openclaw``), the memdir plugin in the memory slot, the
    scripted model, and a Gateway (``openclaw gateway run``) that turns go through.
    ``workspace`` is the agent's workspace folder: memdir's folder of the same agent."""

    home: Path
    model: ScriptedModel
    memdir_url: str
    token_file: Path
    workspace: Path
    gateway: subprocess.Popen[bytes] | None = None
    gateway_port: int = 0

    @property
    def config_path(self) -> Path:
        return self.home / ".openclaw" / "openclaw.json"

    @property
    def gateway_log(self) -> Path:
        return self.home / "gateway.log"

    def configure(self, plugin_config: dict[str, Any] | None = None) -> None:
        """Write ``~/.openclaw/openclaw.json``: the plugin in the memory slot, the model."""
        self.gateway_port = self.gateway_port or free_port()
        config = {
            "gateway": {"mode": "local", "port": self.gateway_port,
                        "auth": {"mode": "token", "token": "test-gateway-token"}},
            "logging": {"file": str(self.home / "openclaw.log")},
            "update": {"checkOnStart": False},
            "agents": {"defaults": {"model": {"primary": f"stub/{MODEL_ID}"},
                                    "workspace": str(self.workspace)}},
            "tools": {"toolSearch": False},  # the model sees the tools' schemas directly
            "models": {"mode": "merge", "providers": {"stub": {
                "baseUrl": self.model.base_url, "apiKey": "stub-local",
                "api": "openai-completions",
                "models": [{"id": MODEL_ID, "name": "Scripted", "reasoning": False,
                            "input": ["text"], "contextWindow": 128000, "maxTokens": 4096,
                            "cost": {"input": 0, "output": 0, "cacheRead": 0,
                                     "cacheWrite": 0}}]}}},
            "plugins": {
                "load": {"paths": [str(PLUGIN)]},
                "slots": {"memory": "memdir"},
                "entries": {
                    "memdir": {"enabled": True, "hooks": {"allowConversationAccess": True},
                               "config": {"url": self.memdir_url,
                                          "tokenFile": str(self.token_file),
                                          **(plugin_config or {})}},
                    "memory-core": {"enabled": False},
                },
            },
        }  # fmt: skip
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCLAW_", "MEMDIR_"))}
        env.update(HOME=str(self.home), PATH=f"{OPENCLAW_BIN}{os.pathsep}{env['PATH']}",
                   NO_COLOR="1", FORCE_COLOR="0", OPENCLAW_NO_AUTO_UPDATE="1")  # fmt: skip
        return env

    def run(
        self, *args: str, timeout: float = 240, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(OPENCLAW_BIN / "openclaw"), *args], env=env or self.env(), cwd=self.home,
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip

    def offline_env(self, folder: Path, **plugin_config: Any) -> dict[str, str]:
        """The environment of a CLI run that finds no Gateway (its config names a closed
        port), with ``plugin_config`` changed: OpenClaw then inspects plugins locally."""
        config = json.loads(self.config_path.read_text(encoding="utf-8"))
        config["gateway"]["port"] = free_port()
        config["plugins"]["entries"]["memdir"]["config"].update(plugin_config)
        path = folder / "openclaw-offline.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        return {**self.env(), "OPENCLAW_CONFIG_PATH": str(path)}

    def start_gateway(self, timeout: float = 120) -> None:
        start = self.log_size()
        with self.gateway_log.open("ab") as log:
            self.gateway = subprocess.Popen(
                [str(OPENCLAW_BIN / "openclaw"), "gateway", "run"], env=self.env(),
                cwd=self.home, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while "[gateway] ready" not in self.gateway_log.read_text(errors="replace")[start:]:
            assert self.gateway.poll() is None, self.gateway_log.read_text(errors="replace")
            assert time.monotonic() < deadline, "the OpenClaw Gateway did not get ready"
            time.sleep(0.25)

    def log_size(self) -> int:
        return self.gateway_log.stat().st_size if self.gateway_log.exists() else 0

    def wait_for_log(self, text: str, since: int, timeout: float = 60) -> None:
        """Wait until the Gateway logs ``text`` after byte ``since`` of its log."""
        deadline = time.monotonic() + timeout
        while text not in self.gateway_log.read_text(errors="replace")[since:]:
            assert time.monotonic() < deadline, f"the Gateway never logged {text!r}"
            time.sleep(0.25)

    def stop_gateway(self) -> None:
        """SIGTERM, as a supervisor stops it: the Gateway ends its sessions (session_end)."""
        if self.gateway is not None:
            stop_server(self.gateway)
            self.gateway = None

    def turn(self, session_id: str, message: str, *steps: Step) -> dict[str, Any]:
        """One agent turn through the Gateway, answered by ``steps``; its JSON result."""
        self.model.script(*steps)
        done = self.run("agent", "--agent", "main", "--session-id", session_id,
                        "--message", message, "--json")  # fmt: skip
        log = self.gateway_log.read_text(errors="replace")[-4000:]
        assert self.model.errors == [], self.model.errors
        assert done.returncode == 0, f"openclaw agent failed:\n{done.stdout}\n{done.stderr}\n{log}"
        assert self.model.steps == [], f"the turn ended early:\n{log}"
        result: dict[str, Any] = json.loads(done.stdout)
        return result
