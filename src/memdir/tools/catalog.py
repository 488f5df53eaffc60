"""The agent tools, defined once: ``TOOLS``, and how an edge finds, runs and lists them.

Every edge that exposes memory to a model builds on ``TOOLS``: the MCP server lists
them, ``openai_tool_schemas()`` and ``anthropic_tool_schemas()`` render them for
function calling, and ``call_tool`` runs one by name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memdir.tools import args, outputs, runners
from memdir.tools.file_tools import FILE_TOOLS
from memdir.tools.host import ToolHost
from memdir.tools.spec import ToolError, ToolResult, ToolSpec
from memdir.tools.versions import HISTORY_TOOLS

TOOLS: tuple[ToolSpec[Any], ...] = (
    ToolSpec(
        "memory_search",
        "Search your long-term memory (MEMORY.md, daily notes, session notes, learnings) by "
        "meaning and keywords. Use it BEFORE answering anything about past conversations, "
        "decisions, people, preferences, dates or earlier work. Each hit is cited as "
        "path:start-end with a score; read more around a hit with memory_get. The top hit's "
        "score is the confidence (0-1) that memory holds something relevant; when nothing "
        "reaches min_score (default 0.1) the answer says nothing relevant was found: then "
        "say you checked memory and found nothing rather than guess.",
        args.MemorySearchArgs,
        runners.run_search,
        output_model=outputs.SearchOutput,
    ),
    ToolSpec(
        "memory_get",
        "Read specific lines of a memory file, numbered, e.g. after memory_search returned "
        "'memory/2024-05-01.md:12-20' (from_line 12, lines 9). Pass the path exactly as the "
        "citation gives it: a hit from outside your own workspace is cited with a prefix, "
        "'global:memory/2024-05-01.md' or 'agent:<id>:memory/...', and memory_get reads "
        "that file. Omit from_line and lines to read the whole file.",
        args.MemoryGetArgs,
        runners.run_get,
        output_model=outputs.SliceOutput,
    ),
    ToolSpec(
        "memory_save",
        "Remember one durable fact: a preference, decision, fact about the user or project, "
        "or context worth keeping. Write one short self-contained statement. It goes to "
        "today's daily note and the facts store; a fact that updates an older one "
        "supersedes it (the old one stays queryable by date).",
        args.MemorySaveArgs,
        runners.run_save,
        read_only=False,  # appends to today's note; an older fact it updates stays queryable
    ),
    ToolSpec(
        "memory_recall",
        "Recall saved facts relevant to a question, most relevant first, with their ids, "
        "categories and dates. Pass as_of (ISO date or datetime) to see what was true then, "
        "including facts that have since been superseded.",
        args.MemoryRecallArgs,
        runners.run_recall,
    ),
    ToolSpec(
        "memory_forget",
        "Retire a saved fact that is wrong or no longer true, by fact_id (from "
        "memory_recall) or by a query matching it. Always give the reason. The fact is not "
        "deleted: it gets an end date and stays visible to memory_recall with as_of.",
        args.MemoryForgetArgs,
        runners.run_forget,
        read_only=False,
        destructive=True,  # hides a fact from recall (kept for as_of and audit)
        idempotent=True,
    ),
    ToolSpec(
        "memory_list_files",
        "List the Markdown files of your workspace, optionally only those whose path starts "
        "with a prefix such as 'memory/' or 'learnings/'. The structured result gives each "
        "file's size in bytes and when it last changed.",
        args.MemoryListFilesArgs,
        runners.run_list_files,
        output_model=outputs.FileList,
    ),
    ToolSpec(
        "memory_read_file",
        "Read a whole workspace file (e.g. MEMORY.md, USER.md, memory/2024-05-01.md). Use "
        "it before editing so you can copy the exact text to replace. The structured "
        "result carries the file's sha256: pass it as expected_sha256 to a change.",
        args.MemoryReadFileArgs,
        runners.run_read_file,
        output_model=outputs.FileRead,
    ),
    ToolSpec(
        "memory_write_file",
        "Create or replace a whole workspace Markdown file atomically. Prefer "
        "memory_edit_file for changes to an existing file, and memory_save for single facts. "
        "create_only writes a new file only; expected_sha256 replaces only the text you "
        "read. The result says whether the file was created or overwritten, its size, time "
        "and sha256.",
        args.MemoryWriteFileArgs,
        runners.run_write_file,
        read_only=False,
        output_model=outputs.FileWritten,
        destructive=True,  # replaces the whole file
        idempotent=True,
    ),
    ToolSpec(
        "memory_edit_file",
        "Replace exact text in a workspace file (e.g. update a line of MEMORY.md or USER.md). "
        "old_text must match exactly once unless replace_all is true; read the file first "
        "and copy the text, including whitespace.",
        args.MemoryEditFileArgs,
        runners.run_edit_file,
        read_only=False,
        output_model=outputs.FileEdited,
        destructive=True,  # replaces text in place
    ),
    ToolSpec(
        "memory_finish_ritual",
        "Finish the first-run ritual: delete BOOTSTRAP.md once you have followed it (your "
        "identity and what you learned about your human are written down). Only "
        "BOOTSTRAP.md is deleted, and only in your own workspace.",
        args.MemoryFinishRitualArgs,
        runners.run_finish_ritual,
        read_only=False,
        output_model=outputs.RitualFinished,
        destructive=True,  # deletes BOOTSTRAP.md
        idempotent=True,
    ),
    ToolSpec(
        "memory_context",
        "Show what your system prompt carries: each workspace file with its status (OK, "
        "TRUNCATED, MISSING, SKIPPED, DISABLED, EXCLUDED), prompt.toml order and size, the "
        "recent daily notes, and the counts of skills and tools. session_kind shows what a "
        "group or shared session would leave out.",
        args.MemoryContextArgs,
        runners.run_context,
    ),
    ToolSpec(
        "memory_set_prompt_file",
        "Switch a workspace Markdown file into or out of your system prompt (enabled) and/or "
        "move it (sort_order, lower first: AGENTS.md 10, SOUL.md 20, IDENTITY.md 30, USER.md "
        "40, TOOLS.md 50, MEMORY.md 60). Kept in prompt.toml; takes effect next prompt.",
        args.MemorySetPromptFileArgs,
        runners.run_set_prompt_file,
        read_only=False,
        output_model=outputs.PromptFileSetting,
        destructive=True,  # changes what the prompt carries (prompt.toml)
        idempotent=True,
    ),
    ToolSpec(
        "memory_list_facts",
        "List your saved facts, newest first, with ids, categories and dates: what you "
        "know for certain, without a query. Filter by category; pass as_of (ISO date or "
        "datetime) for the facts valid then, include_history for superseded and forgotten "
        "ones. Use memory_recall to find facts about a question.",
        args.MemoryListFactsArgs,
        runners.run_list_facts,
    ),
    ToolSpec(
        "memory_recent",
        "What changed in memory lately: workspace files written and facts saved, "
        "superseded or forgotten in the last `days` days (default 7), newest first. Use it "
        "at the start of a session to catch up, then read a file with memory_get.",
        args.MemoryRecentArgs,
        runners.run_recent,
    ),
    *FILE_TOOLS,
    *HISTORY_TOOLS,
)
TOOLS_BY_NAME: dict[str, ToolSpec[Any]] = {tool.name: tool for tool in TOOLS}


def find_tool(name: str) -> ToolSpec[Any]:
    """The tool called ``name``; ``ToolError`` naming the known tools otherwise."""
    try:
        return TOOLS_BY_NAME[name]
    except KeyError:
        known = ", ".join(TOOLS_BY_NAME)
        raise ToolError(f"unknown tool {name!r}; the memory tools are: {known}") from None


def call_tool(memory: ToolHost, name: str, arguments: Mapping[str, Any] | None = None) -> str:
    """Run the tool ``name`` with ``arguments`` (a JSON object) and return its text.

    Raises ``ToolError`` for an unknown tool, invalid arguments or any ``MemdirError``.
    """
    if arguments is not None and not isinstance(arguments, Mapping):
        raise ToolError(
            f"arguments for {name} must be a JSON object, got {type(arguments).__name__}"
        )
    return find_tool(name).invoke(memory, arguments or {})


def call_tool_result(
    memory: ToolHost, name: str, arguments: Mapping[str, Any] | None = None
) -> ToolResult:
    """``call_tool`` with the structured data of the tools that return some."""
    if arguments is not None and not isinstance(arguments, Mapping):
        raise ToolError(
            f"arguments for {name} must be a JSON object, got {type(arguments).__name__}"
        )
    return find_tool(name).invoke_result(memory, arguments or {})


def openai_tool_schemas() -> list[dict[str, Any]]:
    """The tools in OpenAI chat-completions function-calling form."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema(),
            },
        }
        for tool in TOOLS
    ]


def anthropic_tool_schemas() -> list[dict[str, Any]]:
    """The tools in Anthropic Messages API form."""
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema()}
        for tool in TOOLS
    ]


def parse_arguments(raw: str | Mapping[str, Any] | None) -> Mapping[str, Any]:
    """Arguments as a model sent them: a JSON string (OpenAI) or an object (Anthropic)."""
    if raw is None or isinstance(raw, Mapping):
        return raw or {}
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ToolError(
            f"tool arguments are not valid JSON ({exc.msg}); send a JSON object"
        ) from exc
    if not isinstance(parsed, dict):
        raise ToolError("tool arguments must be a JSON object")
    return parsed
