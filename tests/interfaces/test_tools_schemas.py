"""The tool definitions render to MCP, OpenAI and Anthropic schemas from one source."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memdir.memory import TOOL_NAMES
from memdir.tools import TOOLS, ToolSpec, anthropic_tool_schemas, openai_tool_schemas

DESIGN_TOOLS = (
    "memory_search", "memory_get", "memory_save", "memory_recall", "memory_forget",
    "memory_list_files", "memory_read_file", "memory_write_file", "memory_edit_file",
    # beyond DESIGN.md's list: the first-run ritual and the prompt's files (docs/mcp.md)
    "memory_finish_ritual", "memory_context", "memory_set_prompt_file",
)  # fmt: skip
ADDED_TOOLS = (
    "memory_list_facts", "memory_recent",  # listing facts; what changed lately
    # changes without a read-modify-write race (docs/mcp.md, "Files")
    "memory_insert", "memory_rename_file", "memory_delete_file", "memory_append_daily",
)  # fmt: skip
ADDED_TOOLS += ("memory_history", "memory_diff", "memory_restore")  # versions (docs/history.md)


def test_the_tools_are_the_ones_design_names_then_the_added_ones() -> None:
    assert tuple(tool.name for tool in TOOLS) == DESIGN_TOOLS + ADDED_TOOLS
    assert tuple(TOOL_NAMES) == DESIGN_TOOLS + ADDED_TOOLS


@pytest.mark.parametrize("spec", TOOLS, ids=lambda t: t.name)
def test_every_tool_and_argument_is_described(spec: ToolSpec[Any]) -> None:
    assert len(spec.description) >= 80
    schema = spec.input_schema()
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    for name, prop in schema["properties"].items():
        assert prop.get("description"), f"{spec.name}.{name} has no description"
    assert "title" not in json.dumps(schema).replace('"title": {', "")


def test_search_schema_carries_defaults_and_ranges() -> None:
    schema = TOOLS[0].input_schema()
    assert schema["required"] == ["query"]
    assert schema["properties"]["max_results"]["default"] == 6
    assert schema["properties"]["max_results"]["maximum"] == 50
    assert schema["properties"]["scope"]["enum"] == ["agent", "global", "all"]


def test_openai_schemas_are_function_tools() -> None:
    schemas = openai_tool_schemas()
    assert [s["function"]["name"] for s in schemas] == [*DESIGN_TOOLS, *ADDED_TOOLS]
    for entry in schemas:
        assert entry["type"] == "function"
        assert entry["function"]["parameters"]["type"] == "object"
        assert entry["function"]["description"]
    json.dumps(schemas)


def test_anthropic_schemas_carry_input_schema() -> None:
    schemas = anthropic_tool_schemas()
    assert [s["name"] for s in schemas] == [*DESIGN_TOOLS, *ADDED_TOOLS]
    for entry in schemas:
        assert set(entry) == {"name", "description", "input_schema"}
        assert entry["input_schema"]["type"] == "object"
    json.dumps(schemas)


def test_both_formats_share_one_schema_per_tool() -> None:
    for oa, an in zip(openai_tool_schemas(), anthropic_tool_schemas(), strict=True):
        assert oa["function"]["parameters"] == an["input_schema"]
        assert oa["function"]["description"] == an["description"]
