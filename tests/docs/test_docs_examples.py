"""Every command and example in README.md and docs/*.md works as written.

The blocks are found and classified by ``support_docs`` (its docstring lists the
directives). Each document runs in its own sandbox: ``HOME`` is a temporary
folder, so ``~/.memdir`` in the docs is a fresh home; the checkout's ``.venv/bin``
comes first on ``PATH``; the working folder is the checkout, so relative paths
(``examples/``, ``../shared/bench/``) mean what they mean to a reader there.

What the test substitutes, and why: the server of ``server`` blocks listens on a
free port, and ``127.0.0.1:8765`` in those blocks is rewritten to it (another
memdir may hold 8765); ``claude`` is a shell function that records its
arguments, and the test then does what ``claude mcp add`` configures, connecting
the official MCP client to that command or URL; in MCP client configurations the
``memdir`` command (or ``/path/to/.../memdir``) is this checkout's, a
``MEMDIR_HOME`` is the sandbox home and ``<contents of ~/.memdir/api-token>`` is
the token. Everything else runs exactly as written, with the real local model.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from support_docs import (
    DOCS,
    GENERATED,
    MODES,
    OPENCLAW_BIN,
    ROOT,
    SHELL,
    Block,
    all_blocks,
    blocks_of,
    command_lines,
    inline_memdir_commands,
    looks_like_commands,
)
from typer.testing import CliRunner

from memdir.interfaces.cli import app

pytestmark = pytest.mark.slow
VENV_BIN = Path(sys.executable).parent
DOC_PORT = "127.0.0.1:8765"
BLOCK_TIMEOUT_S = 240.0
CLAUDE_STUB = (  # records each call's arguments, NUL-separated, in a numbered file
    "claude() { __claude_n=$((${__claude_n:-0}+1)); "
    'printf "%s\\0" "$@" > "$DOCS_CLAUDE/$__claude_n"; }'
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Sandbox:
    """One document's world: a home, a bash session, and a server when a block needs one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home_dir = root / "user"
        self.home_dir.mkdir()
        (root / "claude").mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "VIRTUAL"))}
        self.env.update(HOME=str(self.home_dir), PATH=f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
                        DOCS_CLAUDE=str(root / "claude"), PYTHONUNBUFFERED="1",
                        COLUMNS="100", NO_COLOR="1")  # fmt: skip
        self.shell: subprocess.Popen[str] | None = None
        self.server: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def memdir_home(self) -> Path:
        return self.home_dir / ".memdir"

    def token(self) -> str:
        return (self.memdir_home / "api-token").read_text(encoding="utf-8").strip()

    # -- bash ----------------------------------------------------------------------------
    def run_shell(self, code: str) -> tuple[bool, str]:
        if self.shell is None:
            self.shell = subprocess.Popen(
                ["bash", "--norc", "--noprofile"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env,
                cwd=ROOT,
            )  # fmt: skip
            self.lines: queue.Queue[str | None] = queue.Queue()
            threading.Thread(target=self._pump, args=(self.shell,), daemon=True).start()
            self._send(f"set -euo pipefail\nshopt -s expand_aliases\n{CLAUDE_STUB}\n")
        script = self.root / f"block-{uuid.uuid4().hex}.sh"
        script.write_text(code, encoding="utf-8")
        marker = f"__docs_block_done_{uuid.uuid4().hex}__"
        self._send(f"source {script} < /dev/null\nprintf '\\n%s\\n' {marker}\n")
        return self._read_until(marker)

    def _pump(self, shell: subprocess.Popen[str]) -> None:
        assert shell.stdout is not None
        try:
            for line in shell.stdout:
                self.lines.put(line)
        except ValueError:  # closed by _close_shell
            pass
        self.lines.put(None)

    def _send(self, text: str) -> None:
        assert self.shell is not None
        assert self.shell.stdin is not None
        self.shell.stdin.write(text)
        self.shell.stdin.flush()

    def _read_until(self, marker: str) -> tuple[bool, str]:
        out: list[str] = []
        deadline = time.monotonic() + BLOCK_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:  # the shell exited: a command failed under set -e
                assert self.shell is not None
                self.shell.wait()
                self._close_shell()
                return False, "".join(out)
            if line.strip() == marker:
                return True, "".join(out)
            out.append(line)
        return False, "".join(out) + f"\n(timed out after {BLOCK_TIMEOUT_S:.0f} s)"

    def _close_shell(self) -> None:
        if self.shell is not None:
            for stream in (self.shell.stdin, self.shell.stdout):
                if stream is not None:
                    stream.close()
        self.shell = None

    # -- the server ------------------------------------------------------------------------
    def start_server(self) -> None:
        if self.server is not None:
            return
        self.port = free_port()
        with (self.root / "server.log").open("wb") as log:
            self.server = subprocess.Popen(
                [str(VENV_BIN / "memdir"), "serve", "--port", str(self.port)],
                env=self.env, cwd=ROOT, stdout=log, stderr=log,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.server.poll() is None, (self.root / "server.log").read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        raise AssertionError("memdir serve did not answer within 60 s")

    def for_server(self, code: str) -> str:
        return code.replace(DOC_PORT, f"127.0.0.1:{self.port}")

    def close(self) -> None:
        for process in (self.shell, self.server):
            if process is None:
                continue
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()


@pytest.fixture(scope="module")
def sandboxes() -> Iterator[dict[Path, Sandbox]]:
    made: dict[Path, Sandbox] = {}
    yield made
    for sandbox in made.values():
        sandbox.close()


def sandbox_for(sandboxes: dict[Path, Sandbox], doc: Path, base: Path) -> Sandbox:
    if doc not in sandboxes:
        folder = base / doc.stem
        folder.mkdir(parents=True)
        sandboxes[doc] = Sandbox(folder)
    return sandboxes[doc]


# -- the blocks ------------------------------------------------------------------------------

BLOCKS = all_blocks()


def test_every_directive_is_known_and_gives_its_reason() -> None:
    for block in BLOCKS:
        assert block.mode in MODES, f"{block.where}: unknown docs-test mode {block.mode!r}"
        if block.mode in ("help", "fragment", "skip"):
            assert len(block.reason) >= 20, f"{block.where}: say why the block is {block.mode}"


def test_command_blocks_are_tagged_so_they_run() -> None:
    untagged = [b.where for b in BLOCKS if b.language == "" and looks_like_commands(b.code)]
    assert untagged == [], "tag these blocks (bash, or text for a synopsis) so they are run"


@pytest.mark.parametrize("doc", [d for d in DOCS if d.name not in GENERATED], ids=lambda d: d.name)
def test_inline_commands_exist_with_their_options(doc: Path) -> None:
    runner = CliRunner()
    for command in inline_memdir_commands(doc):
        words = command.split()[1:]
        result = runner.invoke(app, [*words, "--help"])
        assert result.exit_code == 0, f"{doc.name}: `{command}` -> {result.output}"


def _ids(block: Block) -> str:
    return f"{block.where}-{block.language or 'plain'}"


RUNNABLE = [b for b in BLOCKS if b.language in SHELL | {"python", "json", "toml"}]


@pytest.mark.parametrize("block", RUNNABLE, ids=_ids)
def test_block_works_as_written(
    block: Block, sandboxes: dict[Path, Sandbox], tmp_path_factory: pytest.TempPathFactory
) -> None:
    if block.mode == "skip":
        pytest.skip(f"{block.where}: {block.reason}")
    if block.language == "json" and "mcpServers" not in block.code:
        check_openclaw_config(json.loads(block.code))  # at least JSON; OpenClaw's: valid
        return
    if block.mode == "openclaw" and not (OPENCLAW_BIN / "openclaw").exists():
        pytest.skip(f"{block.where}: OpenClaw is not installed (run scripts/setup-openclaw)")
    base = tmp_path_factory.getbasetemp() / "docs"
    sandbox = sandbox_for(sandboxes, block.doc, base)
    if block.mode == "fragment":
        check_fragment(block)
    elif block.language in SHELL:
        run_shell_block(block, sandbox)
    elif block.language == "python":
        run_python_block(block, sandbox)
    elif block.language == "json":
        run_mcp_config(block, sandbox)
    else:
        load_toml(block, sandbox)


def check_fragment(block: Block) -> None:
    if block.language == "python":
        compile(block.code, block.where, "exec", flags=0x2000)  # top-level await allowed
    elif block.language in SHELL:
        subprocess.run(["bash", "-n"], input=block.code, text=True, check=True)
    else:
        tomllib.loads(block.code) if block.language == "toml" else json.loads(block.code)


def run_shell_block(block: Block, sandbox: Sandbox) -> None:
    code = block.code
    if block.mode == "help":
        lines = [f"{line} --help" for line in command_lines(code)]
        for line in lines:
            ok, output = sandbox.run_shell(line)
            assert ok, f"{block.where}: `{line}` failed:\n{output}"
            assert "usage" in output.lower(), f"{block.where}: `{line}` printed no help"
        return
    if block.mode in ("server", "openclaw"):
        sandbox.start_server()
        code = sandbox.for_server(code)
    if block.mode == "openclaw":  # OpenClaw's CLI under the Node it needs
        code = f'export PATH="{OPENCLAW_BIN}:$PATH"\n{code}'
    ok, output = sandbox.run_shell(code)
    assert ok, f"{block.where} failed:\n{output}"
    assert "Traceback" not in output, f"{block.where}:\n{output}"
    if block.mode == "server":  # curl exits 0 on an error answer: look for problem JSON
        compact = output.replace(" ", "")
        assert '"status":4' not in compact, output
        assert '"status":5' not in compact, output
    connect_recorded_claude_servers(block, sandbox)


def check_openclaw_config(document: object) -> None:
    """An ``openclaw.json`` example: the memdir plugin in the memory slot, its settings valid
    against the plugin's own configSchema (what OpenClaw checks them with)."""
    plugins = document.get("plugins", {}) if isinstance(document, dict) else {}
    entry = plugins.get("entries", {}).get("memdir")
    if entry is None:
        return
    import jsonschema

    manifest = json.loads((ROOT / "integrations/openclaw/openclaw.plugin.json").read_text())
    jsonschema.validate(entry.get("config", {}), manifest["configSchema"])
    assert plugins["slots"]["memory"] == manifest["id"]


def run_python_block(block: Block, sandbox: Sandbox) -> None:
    code = block.code
    if block.mode == "server":
        sandbox.start_server()
        code = sandbox.for_server(code)
    script = sandbox.root / f"block-{block.line}.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], env=sandbox.env, cwd=ROOT, capture_output=True,
        text=True, timeout=BLOCK_TIMEOUT_S,
    )  # fmt: skip
    assert done.returncode == 0, f"{block.where} failed:\n{done.stdout}\n{done.stderr}"


def load_toml(block: Block, sandbox: Sandbox) -> None:
    """A memdir.toml example: memdir loads it (every key known, every value valid); a
    prompt.toml example (only ``[files."..."]`` tables): the prompt-file reader loads it."""
    from memdir.config import load_settings
    from memdir.workspace.prompt_files import load_prompt_files

    home = sandbox.root / f"toml-{block.line}"
    home.mkdir()
    if set(tomllib.loads(block.code)) == {"files"}:
        (home / "prompt.toml").write_text(block.code, encoding="utf-8")
        listed = {entry.path for entry in load_prompt_files(home)}
        assert set(tomllib.loads(block.code)["files"]) <= listed, listed
        return
    (home / "memdir.toml").write_text(block.code, encoding="utf-8")
    loaded = load_settings(home)
    for section, values in tomllib.loads(block.code).items():
        for key, value in values.items():
            assert getattr(getattr(loaded.settings, section), key) == value, (section, key)


# -- MCP clients, as the documented configurations start them ----------------------------------


def run_mcp_config(block: Block, sandbox: Sandbox) -> None:
    servers = json.loads(block.code)["mcpServers"]
    for name, entry in servers.items():
        if "url" in entry:
            sandbox.start_server()
            url = sandbox.for_server(entry["url"])
            headers = {
                key: value.replace("<contents of ~/.memdir/api-token>", sandbox.token())
                for key, value in entry.get("headers", {}).items()
            }
            tools = list_tools_over_http(url, headers)
        else:
            command = entry["command"]
            if Path(command).name == "memdir":
                command = str(VENV_BIN / "memdir")
            env = dict(sandbox.env)
            for key, value in entry.get("env", {}).items():
                env[key] = str(sandbox.memdir_home) if key == "MEMDIR_HOME" else value
            tools = list_tools_over_stdio(command, entry.get("args", []), env)
        assert "memory_search" in tools, f"{block.where}: server {name!r} listed {tools}"


def connect_recorded_claude_servers(block: Block, sandbox: Sandbox) -> None:
    """Do what each recorded `claude mcp add` call configured: connect to that server."""
    calls = sorted((sandbox.root / "claude").iterdir(), key=lambda p: int(p.name))
    for call in calls:
        words = call.read_bytes().decode().split("\0")[:-1]
        call.unlink()
        assert words[:2] in (["mcp", "add"], ["mcp", "add-json"]), f"{block.where}: {words}"
        if words[1] == "add-json":  # the entry memdir mcp-config printed in the sandbox
            entry = json.loads(words[-1])
            tools = list_tools_over_stdio(entry["command"], entry["args"], entry["env"])
        elif "--" in words:
            command, *args = words[words.index("--") + 1 :]
            if Path(command).name == "memdir":
                command = str(VENV_BIN / "memdir")
            tools = list_tools_over_stdio(command, args, sandbox.env)
        else:
            url = next(word for word in words if word.startswith(("http://", "https://")))
            header = words[words.index("--header") + 1]
            key, _, value = header.partition(": ")
            tools = list_tools_over_http(url, {key: value})
        assert "memory_search" in tools, f"{block.where}: claude {words} listed {tools}"


def list_tools_over_stdio(command: str, args: list[str], env: dict[str, str]) -> list[str]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(ROOT))

    async def main() -> list[str]:
        async with Client(params, read_timeout_seconds=60) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    result: list[str] = anyio.run(main)
    return result


def list_tools_over_http(url: str, headers: dict[str, str]) -> list[str]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> list[str]:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return [tool.name for tool in (await client.list_tools()).tools]

    result: list[str] = anyio.run(main)
    return result


def test_the_blocks_are_found() -> None:
    """The parser sees the README's blocks (a guard against a silently empty run)."""
    readme = blocks_of(ROOT / "README.md")
    assert [b.language for b in readme][:3] == ["bash", "bash", "json"]
    assert (
        sum(b.language in SHELL | {"python"} and b.mode in ("run", "server") for b in BLOCKS) >= 8
    )
    assert shutil.which("bash")
