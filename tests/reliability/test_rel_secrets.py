"""Credentials are refused by every write path, in every interface, and prose is not.

The shapes (``memdir/bench/data/credential_shapes.tsv``, over a hundred, after
gitleaks, detect-secrets and trufflehog rules) are generated fresh for each run;
the ordinary notes are lines that talk about passwords, keys, hashes and URLs
without holding a credential. A write is judged on the text it would leave:
an edit that assembles a credential from the old text and the new is refused.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from support_reliability import child_env, start_server, stop_server, workspace_snapshot

from memdir.bench.credentials import (
    corpus,
    credential_shapes,
    ordinary_notes,
    score_corpus,
    score_scanner,
)
from memdir.embeddings.base import HashEmbedder
from memdir.errors import SecretRejectedError
from memdir.facts.secret_notes import candidate_lines, labelled_values
from memdir.facts.secrets import find_secrets
from memdir.memory import Memory
from memdir.tools import ToolError, call_tool

SHAPES = credential_shapes(seed=7)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_shape_is_caught_and_no_ordinary_note_is_flagged(seed: int) -> None:
    score = score_scanner(seed)
    assert score.shapes >= 60
    assert score.missed == []
    assert score.notes >= 100
    assert score.false_positives == []


def test_the_python_api_refuses_every_shape_on_every_write_path(memory: Memory) -> None:
    memory.write_file("memory/plain.md", "# Plain\n\nordinary text\n")
    before = workspace_snapshot(memory.home)
    for shape in SHAPES:
        attempts = (
            lambda line=shape.line: memory.write_file("memory/keys.md", f"# Keys\n\n{line}\n"),
            lambda line=shape.line: memory.edit_file("memory/plain.md", "ordinary text", line),
            lambda line=shape.line: memory.append_daily(line),
        )
        for attempt in attempts:
            with pytest.raises(SecretRejectedError):
                attempt()
    assert workspace_snapshot(memory.home) == before


def test_ordinary_notes_pass_every_write_path(memory: Memory) -> None:
    notes = ordinary_notes()
    memory.write_file("memory/ordinary.md", "\n".join(notes) + "\n")
    memory.write_file("memory/edited.md", "# Edited\n\nplaceholder\n")
    for note in notes[:40]:
        memory.append_daily(note)
    memory.edit_file("memory/edited.md", "placeholder", "\n".join(notes))


def test_an_edit_cannot_assemble_a_credential(memory: Memory) -> None:
    memory.write_file("memory/ci.md", "# CI\n\n- token ghp_abcdefghijklmnop\n")
    with pytest.raises(SecretRejectedError, match="GitHub token"):
        memory.edit_file("memory/ci.md", "mnop\n", "mnopqrstuvwxyzABCDEFGHIJ\n")
    memory.write_file("memory/db.md", "# DB\n\nDB_PASSWORD\n")
    with pytest.raises(SecretRejectedError, match="assignment"):
        memory.edit_file("memory/db.md", "DB_PASSWORD", "DB_PASSWORD=hunter2")
    assert "hunter2" not in memory.read_file("memory/db.md")


def test_a_file_that_already_holds_a_credential_can_still_be_edited(memory: Memory) -> None:
    path = memory.workspace.root / "memory" / "legacy.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Legacy\n\nDB_PASSWORD=hunter2\n\n- todo: rotate it\n")  # by hand
    memory.edit_file("memory/legacy.md", "- todo: rotate it", "- rotated on Monday")
    with pytest.raises(SecretRejectedError):
        memory.edit_file("memory/legacy.md", "- rotated on Monday", "- new: password: s3cr3t!")


@pytest.mark.slow
def test_rest_refuses_every_shape(tmp_path: Path) -> None:
    server = start_server(tmp_path / "home")
    try:
        with server.client() as http:
            assert http.put(
                "/api/v1/files/memory/n.md", json={"content": "# N\n\nx y\n"}
            ).is_success
            before = workspace_snapshot(server.home)
            for shape in SHAPES:
                answers = [
                    http.put("/api/v1/files/memory/k.md", json={"content": shape.line}),
                    http.patch(
                        "/api/v1/files/memory/n.md",
                        json={"old_text": "x y", "new_text": shape.line},
                    ),
                    http.post(
                        "/api/v1/tools/memory_write_file",
                        params={"agent": "alice"},
                        json={"path": "memory/k.md", "content": shape.line},
                    ),
                ]
                if "\n" not in shape.line and len(shape.line) < 1000:
                    answers.append(http.post("/api/v1/facts", json={"content": shape.line}))
                for answer in answers:
                    assert answer.status_code == 422, (shape.name, answer.text)
                    assert "looks like" in answer.json()["detail"], shape.name
            assert workspace_snapshot(server.home) == before
    finally:
        stop_server(server.process)


@pytest.mark.slow
def test_mcp_refuses_every_shape(home: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.init()
        memory.write_file("memory/n.md", "# N\n\nx y\n")
    before = workspace_snapshot(home)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir.interfaces.mcp", "--embedder", "hash", "--home", str(home)],
        env=child_env(),
    )

    async def session() -> list[tuple[str, bool, str]]:
        results = []
        async with Client(params, read_timeout_seconds=60) as client:
            for shape in SHAPES:
                for tool, arguments in (
                    ("memory_write_file", {"path": "memory/k.md", "content": shape.line}),
                    ("memory_edit_file", {"path": "memory/n.md", "old_text": "x y",
                                          "new_text": shape.line}),
                ):  # fmt: skip
                    result = await client.call_tool(tool, arguments)
                    text = " ".join(
                        c.text for c in result.content if isinstance(c, types.TextContent)
                    )
                    results.append((f"{tool} {shape.name}", result.is_error, text))
        return results

    out: list[tuple[str, bool, str]] = anyio.run(session)
    for name, is_error, text in out:
        assert is_error, (name, text)
        assert "looks like" in text, (name, text)
    assert workspace_snapshot(home) == before


def test_tool_calls_refuse_an_assembled_credential(memory: Memory) -> None:
    call_tool(memory, "memory_write_file", {"path": "memory/a.md", "content": "password\n"})
    with pytest.raises(ToolError, match="looks like"):
        call_tool(
            memory,
            "memory_edit_file",
            {"path": "memory/a.md", "old_text": "password", "new_text": "password=hunter2"},
        )


# -- the credential corpus (memdir/bench/data/credential_corpus*.tsv) -----------------------

RECALL_TARGET = 0.95
FALSE_POSITIVE_TARGET = 0.005


@pytest.mark.parametrize("part", ["tune", "heldout"])
def test_the_credential_corpus_meets_its_targets(part: str) -> None:
    score = score_corpus(part, seeds=(0, 1, 2))
    assert score.secrets >= 100
    assert score.ordinary >= 200
    missed = sorted({line.text for line in score.missed})
    flagged = sorted({line.text for line in score.false_positives})
    assert score.recall >= RECALL_TARGET, missed
    assert score.false_positive_rate <= FALSE_POSITIVE_TARGET, flagged


def test_links_of_common_services_are_not_tokens() -> None:
    links = [
        line
        for part in ("tune", "heldout")
        for line in corpus(part, seed=3)
        if line.label == "ordinary" and line.category.startswith("link")
    ]
    assert len(links) >= 150
    assert [line.text for line in links if find_secrets(line.text)] == []


def test_a_sheets_link_saved_through_the_api_is_kept(memory: Memory) -> None:
    link = "https://docs.google.com/spreadsheets/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit#gid=0"
    memory.save(f"The budget sheet is {link}")
    memory.append_daily(f"- Budget: {link}")
    assert link in memory.read_file(memory.list_files("memory/")[0])


def test_every_line_a_label_rule_reads_is_chosen_by_the_stems() -> None:
    for part in ("tune", "heldout"):
        for line in corpus(part, seed=0):
            chosen = set(candidate_lines(line.text))
            for row in line.text.split("\n"):
                if list(labelled_values(row)):
                    assert row in chosen, row
