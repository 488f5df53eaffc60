"""docs/integrations.md, "MCP hosts" and "Hooks": every JSON and TOML snippet parses, each
host's snippet is what `memdir mcp-config` prints, its paths come from MEMDIR_HOME, and the
hook snippets name commands that exist. docs/mcp.md hard-codes no home either."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
from support_docs import ROOT, Block, blocks_of
from typer.testing import CliRunner

from memdir.interfaces.cli import app
from memdir.interfaces.cli.mcp_config import HOSTS, memdir_command, server_entry

DOC = ROOT / "docs" / "integrations.md"
SAMPLE_HOME = "/home/me/.memdir"  # what the snippets were printed with
SAMPLE_COMMAND = "/home/me/.venv/bin/memdir"


def section(doc: Path, title: str) -> list[Block]:
    """The code blocks under ``## title`` (up to the next ``## `` heading)."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"## {title}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [b for b in blocks_of(doc) if start < b.line <= end]


def parse(block: Block) -> dict[str, Any]:
    if block.language == "toml":
        return tomllib.loads(block.code)
    document: dict[str, Any] = json.loads(block.code)
    return document


def documented_command(block: Block) -> list[str]:
    """The `memdir ... mcp-config HOST ...` a snippet's directive names, without `memdir`."""
    return block.reason.split(";")[0].split()[1:]


HOST_BLOCKS = [b for b in section(DOC, "MCP hosts") if "mcp-config" in documented_command(b)]
MCP_DOC_BLOCKS = [
    b for b in blocks_of(ROOT / "docs" / "mcp.md") if "mcp-config" in documented_command(b)
]


def printed(args: list[str], home: str, command: str = SAMPLE_COMMAND) -> str:
    result = CliRunner().invoke(app, args, env={"MEMDIR_HOME": home})
    assert result.exit_code == 0, result.output
    return result.stdout.replace(memdir_command(), command)


def test_every_host_has_its_snippet_and_every_snippet_parses() -> None:
    for block in [*section(DOC, "MCP hosts"), *section(DOC, "Hooks")]:
        if block.language in ("json", "toml"):
            parse(block)  # raises on a broken snippet
    commands = [["memdir", *documented_command(b)] for b in HOST_BLOCKS]
    stdio = {words[2] for words in commands if "--transport" not in words}
    http = {words[2] for words in commands if words[-2:] == ["--transport", "http"]}
    assert stdio == set(HOSTS)
    assert http == set(HOSTS) - {"claude-desktop", "zed"}  # stdio only; the token in the file


@pytest.mark.parametrize("block", HOST_BLOCKS + MCP_DOC_BLOCKS, ids=lambda b: b.where)
def test_a_host_snippet_is_what_mcp_config_prints(block: Block) -> None:
    args = documented_command(block)
    documented = parse(block)
    entry = server_entry(args[args.index("mcp-config") + 1], documented)
    home = entry.get("env", {}).get("MEMDIR_HOME", SAMPLE_HOME)
    output = printed(args, home, entry.get("command", SAMPLE_COMMAND))
    loaded = tomllib.loads(output) if block.language == "toml" else json.loads(output)
    assert documented == loaded, block.where


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_paths_come_from_memdir_home(host: str) -> None:
    sample = printed(["mcp-config", host], SAMPLE_HOME)
    other = printed(["mcp-config", host], "/srv/memory home")
    assert SAMPLE_HOME in sample
    assert other == sample.replace(SAMPLE_HOME, "/srv/memory home")
    assert "~" not in sample
    if host not in ("claude-desktop", "zed", "vscode"):  # stdio only; the token; its prompt
        assert SAMPLE_HOME not in printed(["mcp-config", host, "--transport", "http"], SAMPLE_HOME)


def test_no_snippet_hard_codes_the_home() -> None:
    blocks = [
        *blocks_of(ROOT / "docs" / "mcp.md"),
        *section(DOC, "MCP hosts"),
        *section(DOC, "Hooks"),
    ]
    printed_blocks = {b.where for b in HOST_BLOCKS + MCP_DOC_BLOCKS}  # compared above
    for block in blocks:
        assert "~/.memdir" not in block.code, block.where
        if ".memdir" in block.code and block.where not in printed_blocks:
            assert "MEMDIR_HOME" in block.code, block.where


def test_hook_snippets_name_commands_that_exist() -> None:
    commands = []
    for block in section(DOC, "Hooks"):
        if block.language == "json":
            for entries in parse(block)["hooks"].values():
                commands += [h["command"] for entry in entries for h in entry["hooks"]]
        elif block.language == "toml":
            commands.append(shlex.join(parse(block)["notify"]))
    assert len(commands) == 3, commands
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "memdir"
        result = CliRunner().invoke(app, [*words[1:], "--help"])
        assert result.exit_code == 0, (command, result.output)
