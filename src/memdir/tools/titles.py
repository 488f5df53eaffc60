"""The tools' titles: the short human names an MCP host shows (``Tool.title``).

A tool missing here is titled from its name (``memory_read_file``: "Read file").
"""

from __future__ import annotations

TOOL_TITLES: dict[str, str] = {
    "memory_search": "Search memory",
    "memory_get": "Read lines of a memory file",
    "memory_save": "Save a fact",
    "memory_recall": "Recall facts",
    "memory_forget": "Forget a fact",
    "memory_list_files": "List memory files",
    "memory_read_file": "Read a memory file",
    "memory_write_file": "Write a memory file",
    "memory_edit_file": "Edit a memory file",
    "memory_finish_ritual": "Finish the first-run ritual",
    "memory_context": "Show what the system prompt carries",
    "memory_set_prompt_file": "Put a file in or out of the prompt",
    "memory_list_facts": "List saved facts",
    "memory_recent": "What changed in memory lately",
    "memory_get_fact": "Get a fact by id",
    "memory_update_fact": "Update a fact by id",
    "memory_fact_history": "History of a fact",
}
