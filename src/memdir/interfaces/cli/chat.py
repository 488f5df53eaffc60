"""``memdir chat``: the reference terminal agent over ``memdir.agent``.

Parses the options, builds the model and the ``Memory``, hands the loop to
``memdir.agent.run_chat`` with ``input()`` for lines and a rich display.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from memdir.interfaces.cli._app import JsonOption, console, print_json, state

if TYPE_CHECKING:  # the agent, models and memory load when `chat` runs, not for --help
    from memdir.agent import AgentEvent
    from memdir.config import LoadedSettings
    from memdir.llm import ChatModel

EXTRACTION_WAIT_S = 60.0
NO_MODEL_EXIT = 2  # a configuration problem, like a usage error: the chat cannot start
PROMPT = "you> "
NO_MODEL_HELP = """\
memdir chat needs a chat model, and none is configured (the setting llm.provider is "none").

Configure one in {home}/memdir.toml, for example:

    [llm]
    provider = "openai"          # any OpenAI-compatible endpoint; or "anthropic"
    model = "gpt-4o-mini"
    # base_url = "http://localhost:11434/v1"   # a local server (Ollama, vLLM, LM Studio)
    # api_key_env = "OPENAI_API_KEY"            # the variable that holds the key
    # context_window = 8192                     # set it for local models

and export the key (OPENAI_API_KEY or ANTHROPIC_API_KEY; local servers need none).
Or use environment variables for one run:

    MEMDIR_LLM__PROVIDER=anthropic MEMDIR_LLM__MODEL=claude-sonnet-4-5 memdir chat

See docs/chat.md and docs/llm.md."""
EVENT_STYLES = {"tool_error": "yellow", "correction": "magenta", "emergency": "red",
                "warning": "yellow", "ritual": "green"}  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
    app.command("heartbeat")(heartbeat)


def chat(
    ctx: typer.Context,
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="Agent id (default: the global --agent).")
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Resume or name this session id.")
    ] = None,
    session_kind: Annotated[
        str | None,
        typer.Option(
            "--session-kind",
            help="private (default), group or shared: the latter two keep MEMORY.md, the "
            "facts and private details out of the prompt.",
        ),
    ] = None,
) -> None:
    """Talk with your agent in the terminal: memory tools, compaction, learnings, /help."""
    from memdir.agent import ChatAgent, finish_chat, prepare_workspace, run_chat
    from memdir.memory import composition

    app_state = state(ctx)
    loaded = app_state.settings()
    if loaded.settings.llm.provider in ("none", ""):
        typer.echo(NO_MODEL_HELP.format(home=loaded.home), err=True)
        raise typer.Exit(NO_MODEL_EXIT)
    model, memory = _open(loaded, agent or app_state.agent)
    display = RichDisplay(console)
    with memory:
        for path in prepare_workspace(memory):
            display.show_notice(f"created {path}")
        chat_agent = ChatAgent(
            memory, model, session_id=session, session_kind=session_kind,
            policy=composition.context_policy(loaded.settings),
            extraction_policy=composition.extraction_policy(loaded.settings),
        )  # fmt: skip
        try:
            run_chat(chat_agent, read_line, display, extraction_wait_s=EXTRACTION_WAIT_S)
        except KeyboardInterrupt:
            display.show_notice("interrupted; saving memory before exiting")
            finish_chat(chat_agent, display, EXTRACTION_WAIT_S)


def heartbeat(
    ctx: typer.Context,
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="Agent id (default: the global --agent).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Run HEARTBEAT.md's checklist once now, as `memdir serve` does on curate.heartbeat_cron
    (needs a chat model; what it did goes to today's daily note)."""
    from memdir.agent.heartbeat import run_heartbeat

    app_state = state(ctx)
    loaded = app_state.settings()
    if loaded.settings.llm.provider in ("none", ""):
        typer.echo(
            NO_MODEL_HELP.format(home=loaded.home).replace("memdir chat", "memdir heartbeat")
        )
        raise typer.Exit(0)
    model, memory = _open(loaded, agent or app_state.agent)
    with memory:
        run = run_heartbeat(memory, model)
    if as_json:
        print_json(run)
    elif not run.ran:
        typer.echo(f"heartbeat skipped: {run.skipped_reason}")
    elif run.note is None:
        typer.echo("heartbeat: nothing needed attention (HEARTBEAT_OK)")
    else:
        typer.echo(f"heartbeat noted at {run.note.cite()}: {run.reply}")


def _open(loaded: LoadedSettings, agent_id: str | None) -> tuple[ChatModel, Any]:
    """The conversation model and the ``Memory`` (whose model does the curation)."""
    from memdir.agent import scripted_curation_model_from_env, scripted_model_from_env
    from memdir.memory import Memory

    if loaded.settings.llm.provider == "scripted":  # testing aid: see docs/chat.md
        window = loaded.settings.llm.context_window
        model = scripted_model_from_env(window)
        curator = scripted_curation_model_from_env(window)
        return model, Memory.open(agent_id=agent_id, settings=loaded, chat_model=curator)
    memory = Memory.open(agent_id=agent_id, settings=loaded)
    if memory.chat_model is None:  # a third-party provider that resolved to no model
        memory.close()
        typer.echo(NO_MODEL_HELP.format(home=loaded.home), err=True)
        raise typer.Exit(NO_MODEL_EXIT)
    chat_model: ChatModel = memory.chat_model
    return chat_model, memory


def read_line() -> str | None:
    """One line from the terminal or a pipe; None at end of input or on Ctrl-C."""
    try:
        return input(PROMPT)
    except EOFError:
        return None
    except KeyboardInterrupt:
        typer.echo("")
        return None


class RichDisplay:
    """The chat's ``Display`` on a rich console; model text is never read as markup."""

    def __init__(self, target: Console) -> None:
        self.console = target

    def show_reply(self, text: str) -> None:
        self.console.print(Text("agent> ", style="bold cyan") + Text(text or "(no answer)"))

    def show_event(self, event: AgentEvent) -> None:
        style = EVENT_STYLES.get(event.kind, "dim")
        self.console.print(Text(f"  · {event.text}", style=style))

    def show_notice(self, text: str) -> None:
        self.console.print(Text(text, style="green"))

    def show_error(self, text: str) -> None:
        self.console.print(Text(f"error: {text}", style="bold red"))

    def show_table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        table = Table(*columns, title=title, show_header=any(columns))
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))
        self.console.print(table)
