"""What tests/docs runs: the code blocks of README.md and docs/*.md, and how to run them.

A fenced block is run according to its language and the directive in an HTML
comment on the line before it (invisible on GitHub):

    <!-- docs-test: server -->          run it while `memdir serve` answers (127.0.0.1:8765
                                        is rewritten to the test server's port)
    <!-- docs-test: openclaw -->        the same, with OpenClaw on PATH (``.openclaw-env``
                                        from scripts/setup-openclaw; skipped without it)
    <!-- docs-test: camel -->           a Python block run by camel-ai's environment
                                        (``.venv-camel`` from scripts/setup-camel; skipped
                                        without it)
    <!-- docs-test: help "reason" -->   run each command line with --help appended: for
                                        commands that serve until stopped, need a model,
                                        a recorded session or data the checkout lacks
    <!-- docs-test: fragment "reason" --> only check that it parses (Python: compile;
                                        shell: bash -n): for snippets with placeholders
    <!-- docs-test: skip "reason" -->   not run at all

Every mode but ``server`` needs its reason, which the test report shows.

``bash``/``sh`` blocks of one file run in one bash session (``set -euo pipefail``,
aliases on, as a reader's shell keeps its variables and aliases), ``python``
blocks each in a fresh interpreter, ``json`` blocks holding ``mcpServers`` are
started as an MCP client would start them, ``json`` blocks holding OpenClaw's
``plugins.entries.memdir`` are checked against the plugin's configSchema, ``toml`` blocks
are loaded as memdir.toml. ``text`` and untagged blocks are not run, but an untagged block
whose lines look like commands is an error: tag it so it is run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
GENERATED = {"cli.md"}  # help text generated from the code (tests/cli/test_cli_reference.py)
SHELL = {"bash", "sh", "shell"}
MODES = {"run", "server", "openclaw", "camel", "help", "fragment", "skip"}
OPENCLAW_BIN = ROOT / ".openclaw-env" / "node_modules" / ".bin"
CAMEL_PYTHON = ROOT / ".venv-camel" / "bin" / "python"
_DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(?P<mode>[a-z]+)\s*(?P<reason>.*?)\s*-->", re.S)
_COMMANDISH = re.compile(r"^(\$ )?(memdir|\.venv/bin/|python3? |curl |\./scripts/|pip )")


@dataclass(frozen=True)
class Block:
    """One fenced code block and how to run it."""

    doc: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    mode: str
    reason: str

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks_of(doc: Path) -> list[Block]:
    tokens = MarkdownIt("commonmark").parse(doc.read_text(encoding="utf-8"))
    found: list[Block] = []
    for index, token in enumerate(tokens):
        if token.type != "fence" or token.map is None:
            continue
        mode, reason = "run", ""
        previous = tokens[index - 1] if index else None
        if previous is not None and previous.type == "html_block":
            directive = _DIRECTIVE.search(previous.content)
            if directive is not None:
                mode, reason = directive["mode"], directive["reason"].strip().strip('"')
        language = token.info.strip().split(" ")[0].lower()
        found.append(Block(doc, token.map[0] + 1, language, token.content, mode, reason))
    return found


def all_blocks() -> list[Block]:
    return [block for doc in DOCS if doc.name not in GENERATED for block in blocks_of(doc)]


def looks_like_commands(code: str) -> bool:
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    return bool(lines) and all(_COMMANDISH.match(line) for line in lines)


def command_lines(code: str) -> list[str]:
    """The logical command lines of a shell block: continuations joined, comments dropped."""
    joined = code.replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            commands.append(shlex.join(words))
    return commands


def inline_memdir_commands(doc: Path) -> list[str]:
    """``memdir ...`` commands in inline code spans, also at the end of a span such as
    `claude mcp add memdir -- /path/.venv/bin/memdir mcp --agent coder`; spans with
    placeholders (``[...]``, ``<...>``, ``a|b``, ``...``) are left out."""
    text = doc.read_text(encoding="utf-8")
    commands = []
    for span in re.findall(r"(?<!`)`([^`\n]+)`(?!`)", text):
        starts = [m.start(1) for m in re.finditer(r"(?:^|[\s/])(memdir\s)", span)]
        if not starts or re.search(r"[\[\]<>|]|\.\.\.", span):
            continue
        commands.append(span[starts[-1] :])
    return commands
