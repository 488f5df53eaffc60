"""``memdir import claude-code|openclaw|codex FOLDER --agent NAME``: other tools' Markdown
memories as a new agent workspace (``memory.foreign``; docs/history.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memdir.interfaces.cli._app import JsonOption, print_json, state

if TYPE_CHECKING:
    from memdir.memory.foreign import ImportReport

Folder = Annotated[Path, typer.Argument(help="The other tool's memory folder.")]

_HELP = {
    "claude-code": "Import a Claude Code project's memory (~/.claude/projects/<project>/, or "
    "its memory/ folder; CLAUDE.md becomes AGENTS.md) as the workspace of --agent.",
    "openclaw": "Import an OpenClaw workspace (AGENTS.md, SOUL.md, MEMORY.md, "
    "memory/YYYY-MM-DD.md, ...) as the workspace of --agent.",
    "codex": "Import Codex's memories folder (~/.codex/memories: MEMORY.md, "
    "memory_summary.md, rollout_summaries/, skills/) as the workspace of --agent.",
}


def register(group: typer.Typer) -> None:
    for tool, text in _HELP.items():
        group.command(tool, help=text)(_command(tool))


def _render(report: ImportReport, as_json: bool) -> None:
    if as_json:
        print_json(report)
    else:
        for item in report.files:
            if item.action != "imported":
                typer.echo(f"{item.action}: {item.source} ({item.detail})")
        for file, link in report.links_left:
            typer.echo(f"link left as it is: {link} in {file} (not an imported file)")
        if report.links_rewritten:
            typer.echo(f"links pointed at the imported files: {report.links_rewritten}")
        counts = ", ".join(f"{n} {action}" for action, n in sorted(report.counts.items()))
        version = f"; version {report.version[:12]}" if report.version else ""
        typer.echo(
            f"imported {report.tool} {report.folder} into agent {report.agent}: "
            f"{counts or 'no files'}{version}; {report.indexed} files indexed"
        )
    if report.counts.get("refused") or report.counts.get("conflict"):
        raise typer.Exit(1)


def _command(tool: str) -> Callable[..., None]:
    def run(ctx: typer.Context, folder: Folder, as_json: JsonOption = False) -> None:
        from memdir.interfaces.cli.progress import show_progress
        from memdir.memory.foreign import import_memories

        app_state = state(ctx)
        if app_state.agent is None:
            raise typer.BadParameter(
                "name the agent workspace to import into: --agent NAME", param_hint="--agent"
            )
        with (
            app_state.open_memory() as memory,
            show_progress(f"memdir import {tool}") as progress,
        ):
            report = import_memories(memory, tool, folder, progress)
        _render(report, as_json)

    run.__name__ = tool.replace("-", "_")
    return run
