"""``memdir chat`` through its real entry points: the CLI runner, a pseudo-terminal, the example."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from memdir.agent import SCRIPT_ENV

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
SCRIPT = """
import re
from memdir.llm import Completion, ToolCall


def reply(messages, tools, schema):
    last = messages[-1]
    if last.role == "tool" and last.name == "memory_recall":
        found = re.search(r"cat's name is (\\w+)", last.content)
        return f"Your cat is called {found.group(1)}." if found else "No idea."
    if last.role == "tool":
        return "Saved."
    if "my cat's name is" in last.content.lower():
        call = ToolCall("s1", "memory_save", {"content": last.content})
        return Completion("", tool_calls=(call,))
    if "cat called" in last.content.lower():
        return Completion("", tool_calls=(ToolCall("r1", "memory_recall", {"query": "cat"}),))
    return "Hello from the script."
"""
LAUNCHER = textwrap.dedent(
    """
    from memdir.interfaces.cli import app, chat
    if not any(c.name == "chat" for c in app.registered_commands):
        chat.register(app)
    app()
    """
)


def _chat_registered() -> bool:
    from memdir.interfaces.cli import app

    return any(c.name == "chat" for c in app.registered_commands)


CLI_LISTS_CHAT = _chat_registered()  # read before any test registers it here


def chat_app() -> typer.Typer:
    """The memdir app if it lists ``chat``; else a copy of its root with ``chat`` added.

    The global app is never changed here: other tests compare it with docs/cli.md.
    """
    from memdir.interfaces import cli
    from memdir.interfaces.cli import chat
    from memdir.interfaces.cli._app import make_app

    if CLI_LISTS_CHAT:
        return cli.app
    app = make_app("memdir with chat")
    app.callback()(cli._root)
    chat.register(app)
    return app


def chat_command() -> list[str]:
    """``python -m memdir chat`` once the CLI registers it; the same app via a launcher before."""
    if CLI_LISTS_CHAT:
        return [sys.executable, "-m", "memdir", "chat"]
    return [sys.executable, "-c", LAUNCHER, "chat"]


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "chat_script.py"
    path.write_text(SCRIPT, encoding="utf-8")
    return path


def test_without_a_model_chat_explains_how_to_configure_one(home: Path) -> None:
    result = CliRunner().invoke(chat_app(), ["--home", str(home), "chat"])
    assert result.exit_code == 2  # it did not chat: scripts must not take it for success
    assert result.stdout == ""
    assert "llm.provider" in result.stderr  # names the setting
    assert "[llm]" in result.stderr
    assert 'provider = "openai"' in result.stderr
    assert "MEMDIR_LLM__PROVIDER" in result.stderr
    assert "OPENAI_API_KEY" in result.stderr
    assert "Traceback" not in result.output
    assert not (home / "sessions").exists()


def test_the_scripted_provider_needs_its_script(home: Path) -> None:
    args = ["--home", str(home), "--set", "llm.provider=scripted", "chat"]
    result = CliRunner().invoke(chat_app(), args)
    assert result.exit_code == 1
    assert SCRIPT_ENV in result.stderr
    assert "Traceback" not in result.output


def test_piped_input_runs_a_whole_chat(
    home: Path, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SCRIPT_ENV, str(script))
    args = ["--home", str(home), "--set", "llm.provider=scripted",
            "--set", "embeddings.provider=hash", "chat", "--session", "piped"]  # fmt: skip
    typed = "Hello\nMy cat's name is Whiskerino.\n/status\n/bogus\n"
    result = CliRunner().invoke(chat_app(), args, input=typed)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "agent> Hello from the script." in out
    assert "agent> Saved." in out
    assert "memory_save(content=" in out
    assert "piped" in out
    assert "unknown command '/bogus'" in out
    assert (home / "sessions" / "global" / "piped.jsonl").is_file()
    assert "created BOOTSTRAP.md" in out


class Terminal:
    """A child process on a pseudo-terminal, read as a screen of text."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            command, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT, close_fds=True
        )
        os.close(slave)
        self.screen = ""

    def read_until(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.screen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} never appeared; screen:\n{self.screen}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"{text!r} never appeared; screen:\n{self.screen}")
                self.screen += ANSI.sub("", chunk.decode("utf-8", "replace"))
        return self.screen

    def type(self, line: str) -> None:
        self.screen = ""
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        code = self.process.wait(timeout=30)
        os.close(self.master)
        return code


@pytest.mark.slow
def test_chat_in_a_pseudo_terminal(home: Path, script: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")},
        "MEMDIR_HOME": str(home),
        "MEMDIR_LLM__PROVIDER": "scripted",
        "MEMDIR_EMBEDDINGS__PROVIDER": "hash",
        SCRIPT_ENV: str(script),
        "COLUMNS": "120",
        "TERM": "xterm",
    }
    terminal = Terminal(chat_command(), env)
    try:
        terminal.read_until("you> ")
        terminal.type("My cat's name is Whiskerino.")
        assert "agent> Saved." in terminal.read_until("you> ")
        terminal.type("/new")
        assert "ended session" in terminal.read_until("you> ")
        terminal.type("What is my cat called?")
        screen = terminal.read_until("you> ")
        assert "memory_recall(query='cat')" in screen
        assert "agent> Your cat is called Whiskerino." in screen
        terminal.type("/context")
        screen = terminal.read_until("you> ")
        for name in ("AGENTS.md", "SOUL.md", "MEMORY.md", "MISSING", "total"):
            assert name in screen
        terminal.type("/exit")
        terminal.read_until("memory")
    finally:
        code = terminal.close()
    assert code == 0
    assert "Traceback" not in terminal.screen


@pytest.mark.slow
def test_the_scripted_example_runs(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "chat_scripted.py"), str(tmp_path / "ex")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "tool memory_recall returned" in result.stdout
    assert result.stdout.splitlines()[-2] == "agent> Your cat is called Whiskerino."
    assert "Whiskerino" in (tmp_path / "ex" / "workspace" / "memory").glob(
        "????-??-??.md"
    ).__next__().read_text(encoding="utf-8")
