"""An error's next step is named in the terms of the edge that reports it.

The core raises errors with a structured ``NextStep`` (``memdir.errors``); the CLI,
the tools (MCP, function calling) and the REST API each name the step in their own
vocabulary. The same mistake is made through each edge and the answer compared.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support_interfaces import LiveServer
from typer.testing import CliRunner

from memdir.errors import ACTIONS, PYTHON_STEP_NAMES, NextStep, NotFoundError
from memdir.interfaces.cli import app as cli_app
from memdir.interfaces.cli._app import CLI_STEP_NAMES
from memdir.interfaces.http.problems import REST_STEP_NAMES
from memdir.memory import Memory
from memdir.tools import TOOL_STEP_NAMES, ToolError, call_tool


@pytest.mark.parametrize(
    "names", [PYTHON_STEP_NAMES, CLI_STEP_NAMES, TOOL_STEP_NAMES, REST_STEP_NAMES]
)
def test_every_vocabulary_names_every_action(names: dict[str, str]) -> None:
    assert sorted(names) == sorted(ACTIONS)
    assert all(name.strip() for name in names.values())


def test_the_step_is_rendered_with_the_given_names() -> None:
    error = NotFoundError("'a.md' does not exist", next_step=NextStep("see {}", "list_files"))
    assert str(error) == "'a.md' does not exist; see Memory.list_files()"
    assert error.describe({"list_files": "the list"}) == "'a.md' does not exist; see the list"
    assert str(NotFoundError("plain")) == "plain"


def test_a_missing_file_through_each_edge(memory: Memory, home: Path, server: LiveServer) -> None:
    memory.init()
    with pytest.raises(ToolError) as tool_error:
        call_tool(memory, "memory_read_file", {"path": "memory/nope.md"})
    assert "see which files exist with memory_list_files" in str(tool_error.value)

    cli = CliRunner().invoke(
        cli_app,
        [
            "--home",
            str(home),
            "--set",
            "embeddings.provider=hash",
            "files",
            "read",
            "memory/nope.md",
        ],
    )
    assert cli.exit_code == 1
    assert "see which files exist with `memdir files list`" in cli.stderr

    with server.client() as api:
        response = api.get("/api/v1/files/memory/nope.md")
    assert response.status_code == 404
    assert "see which files exist with GET /api/v1/files" in response.json()["detail"]


def test_an_ambiguous_edit_through_each_edge(memory: Memory, server: LiveServer) -> None:
    memory.write_file("notes.md", "tea, tea\n")
    with pytest.raises(ToolError, match="pass replace_all=true"):
        call_tool(memory, "memory_edit_file", {"path": "notes.md", "old_text": "tea",
                                               "new_text": "x"})  # fmt: skip
    with server.client() as api:
        api.put("/api/v1/files/twice.md", json={"content": "tea, tea\n"})
        response = api.patch("/api/v1/files/twice.md", json={"old_text": "tea", "new_text": "x"})
    assert response.status_code == 409
    assert 'send "replace_all": true' in response.json()["detail"]


def test_rest_names_a_missing_query_parameter(server: LiveServer) -> None:
    with server.client() as api:
        response = api.get("/api/v1/search")
    assert response.status_code == 422
    assert response.json()["detail"] == "the query parameter 'query' is required"


def test_rest_names_an_invalid_body_field(server: LiveServer) -> None:
    with server.client() as api:
        response = api.post("/api/v1/facts", json={"content": "x", "importance": 99})
    assert response.status_code == 422
    assert "the body field 'importance'" in response.json()["detail"]
