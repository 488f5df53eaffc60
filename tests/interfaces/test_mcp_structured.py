"""Structured results, titles and declared aliases, through the SDK's client over stdio.

One session (a real ``memdir mcp`` subprocess) runs the fact tools, facts by id, a search
of a long note and the file list; every structured result is validated against the
output schema the server declared, and every argument alias against its input schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import mcp_types as types
import pytest
from mcp import Client
from test_mcp_stdio import run_session, text_of

pytestmark = pytest.mark.slow
LONG = "memory/2024-06-01.md"
LONG_TEXT = "# 2024-06-01\n\nThe zebra runbook: " + " ".join(["restart the queue"] * 200) + "\n"


async def script(client: Client) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": {t.name: t for t in (await client.list_tools()).tools}}

    async def step(name: str, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await client.call_tool(tool, arguments)
        out[name] = result
        return result.structured_content or {}

    first = await step("save", "memory_save", content="The staging cluster runs in eu-west-1")
    old_id = first["fact"]["id"]
    await step("save_other", "memory_save", content="The user prefers tea over coffee")
    new = await step("update", "memory_update_fact", fact_id=old_id,
                     content="The staging cluster runs in us-east-2")  # fmt: skip
    out["ids"] = (old_id, new["fact"]["id"])
    await step("update_again_old", "memory_update_fact", fact_id=old_id, text="eu-central-1")
    await step("get_old", "memory_get_fact", fact_id=old_id)
    await step("history", "memory_fact_history", fact_id=new["fact"]["id"])
    await step("recall", "memory_recall", query="staging cluster region", limit=3)
    await step("list_all", "memory_list_facts", include_history=True, limit=1)
    await step("recent", "memory_recent", days=1)
    await step("forget", "memory_forget", fact_id=new["fact"]["id"], reason="cluster retired")
    await step("bad_id", "memory_get_fact", fact_id="staging")
    await step("unknown_id", "memory_get_fact", fact_id="f-aaaaaaaaaa")
    await step("write_long", "memory_write_file", path=LONG, content=LONG_TEXT)
    await step("search", "memory_search", query="zebra runbook", maxResults=2)
    await step("search_old_name", "memory_search", query="zebra runbook", max_results=1)
    await step("search_two_names", "memory_search", query="zebra", limit=1, maxResults=2)
    await step("list_files", "memory_list_files")
    await step("get_by_alias", "memory_get", filePath=LONG, lines=1, **{"from": 3})
    await step("get_without_path", "memory_get", lines=1)
    return out


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("structured") / "home"
    out: dict[str, Any] = run_session(home, script)
    out["home"] = home
    return out


def ok(session: dict[str, Any], name: str) -> types.CallToolResult:
    result: types.CallToolResult = session[name]
    assert not result.is_error, text_of(result)
    return result


def data(session: dict[str, Any], name: str) -> dict[str, Any]:
    """The step's structured content, valid against the output schema the server declared."""
    result = ok(session, name)
    tool = session["tools"][_tool_of(name)]
    assert tool.output_schema is not None, tool.name
    assert result.structured_content is not None, name
    jsonschema.validate(result.structured_content, tool.output_schema)
    structured: dict[str, Any] = result.structured_content
    return structured


STEP_TOOLS = {
    "save": "memory_save", "save_other": "memory_save", "update": "memory_update_fact",
    "get_old": "memory_get_fact", "history": "memory_fact_history", "recall": "memory_recall",
    "list_all": "memory_list_facts", "recent": "memory_recent", "forget": "memory_forget",
    "search": "memory_search", "search_old_name": "memory_search",
    "list_files": "memory_list_files", "write_long": "memory_write_file",
}  # fmt: skip


def _tool_of(step: str) -> str:
    return STEP_TOOLS[step]


@pytest.mark.parametrize("step", sorted(STEP_TOOLS))
def test_every_structured_result_matches_its_declared_schema(
    session: dict[str, Any], step: str
) -> None:
    data(session, step)


def test_every_tool_has_a_title_and_the_fact_tools_declare_output_schemas(
    session: dict[str, Any],
) -> None:
    tools = session["tools"]
    for tool in tools.values():
        assert tool.title
        assert tool.title != tool.name
        assert tool.annotations.title == tool.title
    for name in ("memory_save", "memory_recall", "memory_list_facts", "memory_forget",
                 "memory_recent", "memory_get_fact", "memory_update_fact",
                 "memory_fact_history"):  # fmt: skip
        schema = tools[name].output_schema
        assert schema is not None, name
        jsonschema.Draft202012Validator.check_schema(schema)


def test_fact_results_carry_ids_validity_and_supersession(session: dict[str, Any]) -> None:
    old_id, new_id = session["ids"]
    update = data(session, "update")
    assert update["action"] == "update"
    assert update["fact"]["supersedes"] == old_id
    assert update["superseded"]["superseded_by"] == new_id
    assert update["superseded"]["valid_to"] == update["fact"]["valid_from"]
    got = data(session, "get_old")
    assert (got["id"], got["current"], got["superseded_by"]) == (old_id, False, new_id)
    assert "us-east-2" in text_of(session["update"])
    history = data(session, "history")
    assert [v["id"] for v in history["versions"]] == [old_id, new_id]
    assert history["current_id"] == new_id
    recalled = data(session, "recall")["facts"]
    assert recalled[0]["id"] == new_id
    assert isinstance(recalled[0]["score"], float)
    assert "fused" in recalled[0]["breakdown"]
    assert all(fact["current"] for fact in recalled)
    listed = data(session, "list_all")
    assert listed["total"] == 3
    assert len(listed["facts"]) == 1  # limit=1
    forgotten = data(session, "forget")["fact"]
    assert forgotten["forgotten_reason"] == "cluster retired"
    assert forgotten["current"] is False
    recent = data(session, "recent")
    assert {change["fact"]["id"] for change in recent["facts"]} >= {old_id, new_id}


def test_bad_fact_ids_are_tool_errors_that_name_the_fix(session: dict[str, Any]) -> None:
    for step, fragment in [
        ("update_again_old", "update that id instead"),
        ("bad_id", "e.g. 'f-ab12cd34ef'; find it with memory_recall"),
        ("unknown_id", "no fact has the id 'f-aaaaaaaaaa'"),
    ]:
        result = session[step]
        assert result.is_error
        assert fragment in text_of(result)
    assert session["ids"][1] in text_of(session["update_again_old"])


def test_search_hits_are_capped_and_say_how_to_read_the_rest(session: dict[str, Any]) -> None:
    found = data(session, "search")
    hit = found["hits"][0]
    assert hit["truncated"] is True
    assert hit["chars"] == len(LONG_TEXT.splitlines()[2])
    assert 250 <= len(hit["text"]) <= 500
    whole = LONG_TEXT.splitlines()[2]
    assert whole.startswith(hit["text"])
    assert whole[len(hit["text"])] == " "  # cut between words
    text = text_of(session["search"])
    assert f"memory_get path='{LONG}' from_line=3 lines=1" in text
    assert text.endswith(f"Searched {found['searched_files']} file(s).")
    assert found["searched_files"] >= 1
    assert "vector" not in text  # the breakdown is in the structured content only
    assert hit["breakdown"]
    assert len(data(session, "search_old_name")["hits"]) == 1
    assert "give only one of limit" in text_of(session["search_two_names"])


def test_file_list_puts_the_prompt_files_first_and_says_so(session: dict[str, Any]) -> None:
    files = data(session, "list_files")["files"]
    ordered = [f for f in files if f["sort_order"] is not None]
    assert [f["path"] for f in files[: len(ordered)]] == [f["path"] for f in ordered]
    assert [f["sort_order"] for f in ordered] == sorted(f["sort_order"] for f in ordered)
    assert {"AGENTS.md", "SOUL.md"} <= {f["path"] for f in ordered if f["enabled"]}
    assert any(f["path"] == LONG and f["sort_order"] is None for f in files)
    assert "AGENTS.md  (in the prompt, order 10)" in text_of(session["list_files"])


def test_an_alias_of_a_required_argument_is_enough(session: dict[str, Any]) -> None:
    schema = session["tools"]["memory_get"].input_schema
    jsonschema.validate({"filePath": LONG, "from": 3, "lines": 1}, schema)
    assert "Required, as path or filePath" in schema["properties"]["path"]["description"]
    assert text_of(ok(session, "get_by_alias")).startswith(f"{LONG} lines 3-3")
    refused = session["get_without_path"]
    assert refused.is_error
    assert "path: Field required" in text_of(refused)


def test_every_declared_alias_passes_the_input_schema(session: dict[str, Any]) -> None:
    aliases = 0
    for tool in session["tools"].values():
        schema = tool.input_schema
        for name, prop in schema["properties"].items():
            if "Alias of" not in prop.get("description", ""):
                continue
            aliases += 1
            value = _sample(prop)
            arguments = {key: _sample(schema["properties"][key]) for key in schema.get(
                "required", [])}  # fmt: skip
            arguments[name] = value
            jsonschema.validate(arguments, schema)
    assert aliases >= 6  # maxResults, max_results, minScore, filePath, from, text


def test_how_many_is_called_limit_on_every_tool(session: dict[str, Any]) -> None:
    counts = {"limit", "max_results", "maxResults", "top_k", "count", "n"}
    for tool in session["tools"].values():
        props = tool.input_schema["properties"]
        own = [n for n in props if n in counts and "Alias of" not in props[n]["description"]]
        assert own in ([], ["limit"]), (tool.name, own)


def _sample(prop: dict[str, Any]) -> Any:
    kinds = {p.get("type") for p in prop.get("anyOf", [prop])}
    if "integer" in kinds:
        return max(1, prop.get("minimum", 1))
    if "number" in kinds:
        return 0.5
    if "boolean" in kinds:
        return True
    return "f-ab12cd34ef" if "fact" in prop.get("description", "") else "MEMORY.md"


def test_session_home_kept_the_superseded_line(session: dict[str, Any]) -> None:
    notes = list((Path(session["home"]) / "workspace" / "memory").glob("*.md"))
    text = "".join(note.read_text() for note in notes)
    assert "eu-west-1" in text
    assert f"supersedes={session['ids'][0]}" in text
