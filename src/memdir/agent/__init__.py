"""memdir.agent: the reference chat agent behind ``memdir chat``.

``ChatAgent`` holds one conversation between a person, a chat model and a
``Memory``: the system prompt from the workspace, the memory tools as function
calls (from ``memdir.tools.TOOLS``, like every other edge), flush-then-compact as
the window fills, learnings from tool failures and corrections, session-end notes
and background extraction. ``run_chat()`` is the loop with its slash commands,
apart from any terminal: it reads lines through a callable and shows things
through a ``Display``.

Layering: this package sits beside the interfaces, over ``memdir.memory``; it also
uses ``memdir.tools``, context/, curate/ and llm/ directly for what the facade does not
carry (transcript compaction records, learnings, background extraction).
"""

from __future__ import annotations

from memdir.agent.commands import COMMANDS, Command, parse_command
from memdir.agent.conversation import DEFAULT_TOOL_ROUNDS, ChatAgent, Observer
from memdir.agent.flush import FlushFacts, find_facts, make_flush
from memdir.agent.repl import Display, ReadLine, finish_chat, run_chat, run_command
from memdir.agent.ritual import BOOTSTRAP_FILE, BootstrapRitual, prepare_workspace
from memdir.agent.script import (
    SCRIPT_ENV,
    load_reply_function,
    scripted_curation_model_from_env,
    scripted_model_from_env,
)
from memdir.agent.toolbox import ToolRun, chat_tool_specs, run_tool_call
from memdir.agent.turns import AgentEvent, AgentStatus, Turn

__all__ = [
    "BOOTSTRAP_FILE",
    "COMMANDS",
    "DEFAULT_TOOL_ROUNDS",
    "SCRIPT_ENV",
    "AgentEvent",
    "AgentStatus",
    "BootstrapRitual",
    "ChatAgent",
    "Command",
    "Display",
    "FlushFacts",
    "Observer",
    "ReadLine",
    "ToolRun",
    "Turn",
    "chat_tool_specs",
    "find_facts",
    "finish_chat",
    "load_reply_function",
    "make_flush",
    "parse_command",
    "prepare_workspace",
    "run_chat",
    "run_command",
    "run_tool_call",
    "scripted_curation_model_from_env",
    "scripted_model_from_env",
]
