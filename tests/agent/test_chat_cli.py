"""``memdir chat`` through its real entry points: the CLI runner, a pseudo-terminal, the example."""

from __future__ import annotations

import json
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


CURATING_SCRIPT = '''
import json
import re

from memdir.errors import ChatModelError


def reply(messages, tools, schema):
    return "Noted, thank you."


def _block(body, tag):
    found = re.search(rf"<{tag}>\\n(.*?)\\n</{tag}>", body, re.S)
    return found.group(1) if found else ""


def curate(messages, tools, schema):
    """A stand-in for a model that curates: it fills USER.md and corrects MEMORY.md."""
    if not schema or schema.get("title") != "ExtractionDecision":
        raise ChatModelError("this script answers extraction requests only")
    body = messages[-1].content
    talk, profile, memory = (_block(body, t) for t in ("conversation", "user_md", "memory_md"))
    name = re.search(r"my name is (\\w+)", talk, re.I)
    zone = re.search(r"my timezone is ([\\w/]+)", talk, re.I)
    prefer = re.search(r"I prefer ([^.\\n]+)", talk)
    for field in ("Name", "What to call them"):
        profile = profile.replace(f"- **{field}:**", f"- **{field}:** {name.group(1)}")
    profile = profile.replace("- **Timezone:**", f"- **Timezone:** {zone.group(1)}")
    profile = profile.replace("- (none recorded yet)", f"- Prefers {prefer.group(1)}")
    moved = re.search(r"staging now runs in ([\\w-]+)", talk, re.I)
    memory = re.sub(r"eu-west-\\d", moved.group(1), memory)
    return json.dumps({
        "should_update": True, "reason": "the user introduced themselves",
        "daily_entry": "- Met the user", "memory_update": memory, "profile_update": profile,
    })
'''


def test_a_chat_fills_in_the_profile_and_corrects_a_small_memory(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The curation loop of a user with a model: the seeded USER.md gets filled in and one
    of the two entries of MEMORY.md corrected, both through the loss guard."""
    script = tmp_path / "curating_script.py"
    script.write_text(CURATING_SCRIPT, encoding="utf-8")
    monkeypatch.setenv(SCRIPT_ENV, str(script))
    workspace = home / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(
        "# MEMORY\n\n- Staging runs in eu-west-1\n- Deploys need one approval\n"
    )
    args = ["--home", str(home), "--set", "llm.provider=scripted",
            "--set", "embeddings.provider=hash", "chat"]  # fmt: skip
    typed = (
        "Hello! My name is Alice and my timezone is Europe/Berlin.\n"
        "I prefer short answers without small talk.\n"
        "By the way, staging now runs in us-east-2.\n"
    )
    result = CliRunner().invoke(chat_app(), args, input=typed)
    assert result.exit_code == 0, result.output
    assert "memory curated (model)" in result.stdout
    assert "USER.md rewritten" in result.stdout
    assert "MEMORY.md rewritten" in result.stdout
    profile = (workspace / "USER.md").read_text()
    assert "- **Name:** Alice\n" in profile
    assert "- **What to call them:** Alice\n" in profile
    assert "- **Timezone:** Europe/Berlin\n" in profile
    assert "- Prefers short answers without small talk\n" in profile
    assert "- **Pronouns:** (optional)\n" in profile  # every other line kept
    memory = (workspace / "MEMORY.md").read_text()
    assert memory == "# MEMORY\n\n- Staging runs in us-east-2\n- Deploys need one approval\n"
    history = sorted(p.parent.name for p in (workspace / ".history").rglob("*.md") if p.is_file())
    assert history == ["MEMORY.md", "USER.md"]  # the old MEMORY.md and the template, backed up
    assert not list((workspace / ".history").rglob("*-refused.md"))


def test_without_a_curating_model_plain_statements_become_facts(
    home: Path, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SCRIPT_ENV, str(script))  # no curate(): curation on the heuristics
    args = ["--home", str(home), "--set", "llm.provider=scripted",
            "--set", "embeddings.provider=hash", "chat"]  # fmt: skip
    typed = "I'm vegetarian and I'm allergic to nuts.\nMy name is Alice and I work at ACME.\n"
    result = CliRunner().invoke(chat_app(), args, input=typed)
    assert result.exit_code == 0, result.output
    assert "memory curated (heuristic): 4 facts saved" in result.stdout
    notes = "\n".join(
        p.read_text(encoding="utf-8") for p in (home / "workspace" / "memory").glob("*.md")
    )
    for fact in (
        "The user is vegetarian",
        "The user is allergic to nuts",
        "The user's name is Alice",
        "The user works at ACME",
    ):
        assert f"- {fact} <!-- memdir:fact" in notes
    assert "and I work" not in notes.replace(typed.splitlines()[1], "")


def test_a_missing_agents_md_is_said_not_silent(
    home: Path, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SCRIPT_ENV, str(script))
    base = ["--home", str(home), "--set", "embeddings.provider=hash"]
    chat = [*base, "--set", "llm.provider=scripted", "chat"]
    assert CliRunner().invoke(chat_app(), [*base, "init"]).exit_code == 0
    (home / "workspace" / "AGENTS.md").unlink()
    result = CliRunner().invoke(chat_app(), chat, input="Hello\n")
    assert result.exit_code == 0, result.output
    assert "AGENTS.md is missing" in result.stdout
    assert "memdir init" in result.stdout
    prompt = CliRunner().invoke(chat_app(), [*base, "prompt"])
    said = "[MISSING] AGENTS.md, this workspace's operating instructions, is missing"
    assert said in prompt.stdout
    context = CliRunner().invoke(chat_app(), [*base, "context", "--json"])
    [agents] = [f for f in json.loads(context.stdout)["files"] if f["name"] == "AGENTS.md"]
    assert agents["status"] == "MISSING"
    assert agents["note"].startswith("required")
    assert CliRunner().invoke(chat_app(), [*base, "init"]).exit_code == 0
    again = CliRunner().invoke(chat_app(), chat, input="Hello\n")
    assert "AGENTS.md is missing" not in again.stdout  # init wrote it again


def test_the_runtime_section_says_where_the_agent_runs(home: Path) -> None:
    import os
    import socket

    base = ["--home", str(home), "--set", "embeddings.provider=hash"]
    assert CliRunner().invoke(chat_app(), [*base, "init"]).exit_code == 0
    result = CliRunner().invoke(chat_app(), [*base, "prompt"])
    runtime = result.stdout.split("# Runtime", 1)[1].split("\n#", 1)[0]
    assert f"- host: {socket.gethostname()}\n" in runtime
    assert f"- cwd: {os.getcwd()}\n" in runtime
