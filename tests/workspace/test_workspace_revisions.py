"""Hash-checked writes, create-only, insert, rename and delete through ``Memory``: each
refuses to lose a change it did not see, and the index follows every change."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.errors import (
    ConflictError,
    InvalidInputError,
    InvalidPathError,
    NotFoundError,
    SecretRejectedError,
)
from memdir.memory import Memory
from memdir.workspace.revisions import content_sha256

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    (home / "workspace").mkdir(parents=True)
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as opened:
        yield opened


def paths_found(memory: Memory, query: str) -> list[str]:
    return [hit.path for hit in memory.search(query, min_score=0.0).hits]


def test_read_text_hashes_the_utf8_text(memory: Memory) -> None:
    memory.write_file("notes/a.md", "héllo\n")
    read = memory.read_text("notes/a.md")
    assert read.content == "héllo\n"
    assert read.sha256 == hashlib.sha256("héllo\n".encode()).hexdigest()
    assert read.sha256 == content_sha256(read.content)


def test_a_write_with_a_stale_hash_changes_nothing(memory: Memory) -> None:
    memory.write_file("notes/a.md", "v1\n")
    seen = memory.read_text("notes/a.md").sha256
    memory.write_file("notes/a.md", "v2 by someone else\n")
    with pytest.raises(ConflictError, match=r"changed since you read it.*Memory\.read_text"):
        memory.write_file("notes/a.md", "v3\n", expected_sha256=seen)
    assert memory.read_file("notes/a.md") == "v2 by someone else\n"
    fresh = memory.read_text("notes/a.md").sha256
    memory.write_file("notes/a.md", "v3\n", expected_sha256=fresh.upper())
    assert memory.read_file("notes/a.md") == "v3\n"


def test_a_hash_for_a_deleted_file_is_a_conflict(memory: Memory) -> None:
    memory.write_file("notes/gone.md", "x\n")
    seen = memory.read_text("notes/gone.md").sha256
    memory.delete_file("notes/gone.md")
    with pytest.raises(ConflictError, match="no longer exists"):
        memory.write_file("notes/gone.md", "y\n", expected_sha256=seen)
    assert not memory.workspace.has_file("notes/gone.md")


def test_a_malformed_hash_is_refused_naming_the_argument(memory: Memory) -> None:
    memory.write_file("notes/a.md", "v1\n")
    with pytest.raises(InvalidInputError, match="expected_sha256 'abc' is not a SHA-256"):
        memory.write_file("notes/a.md", "v2\n", expected_sha256="abc")


def test_a_stale_edit_is_a_conflict_even_when_its_text_is_still_there(memory: Memory) -> None:
    memory.write_file("notes/e.md", "alpha\nbeta\n")
    seen = memory.read_text("notes/e.md").sha256
    memory.edit_file("notes/e.md", "alpha", "ALPHA")
    with pytest.raises(ConflictError):
        memory.edit_file("notes/e.md", "beta", "BETA", expected_sha256=seen)
    assert memory.read_file("notes/e.md") == "ALPHA\nbeta\n"


def test_create_only_never_replaces(memory: Memory) -> None:
    assert memory.write_file("notes/new.md", "first\n", create_only=True) == "notes/new.md"
    with pytest.raises(ConflictError, match="already exists"):
        memory.write_file("notes/new.md", "second\n", create_only=True)
    assert memory.read_file("notes/new.md") == "first\n"
    with pytest.raises(InvalidInputError, match="not both"):
        memory.write_file("notes/other.md", "x", create_only=True, expected_sha256="0" * 64)


def test_create_only_of_a_global_file_an_agent_reads_is_a_conflict(home: Path) -> None:
    with Memory.open(home, embedder=None, chat_model=None) as shared:
        shared.init()
    with Memory.open(home, "coder", embedder=None, chat_model=None) as agent:
        with pytest.raises(ConflictError):
            agent.write_file("SOUL.md", "mine\n", create_only=True)
        read = agent.read_text("SOUL.md")  # the global file, by fallback
        agent.write_file("SOUL.md", read.content + "coder\n", expected_sha256=read.sha256)
        assert agent.read_file("SOUL.md").endswith("coder\n")
        assert (home / "agents" / "coder" / "SOUL.md").is_file()
        assert not (home / "workspace" / "SOUL.md").read_text().endswith("coder\n")


@pytest.mark.parametrize(
    ("before", "line", "text", "after"),
    [
        ("", 0, "only", "only\n"),
        ("a\nb\n", 0, "zero", "zero\na\nb\n"),
        ("a\nb\n", 1, "mid", "a\nmid\nb\n"),
        ("a\nb\n", 2, "end\n", "a\nb\nend\n"),
        ("a\nb", 2, "end", "a\nb\nend\n"),
        ("a\nb", 1, "mid", "a\nmid\nb"),
        ("a\r\nb\r\n", 1, "x", "a\r\nx\nb\r\n"),
        ("a\n", 1, "two\nlines", "a\ntwo\nlines\n"),
        ("a\n", 1, "", "a\n\n"),
    ],
)
def test_insert_keeps_every_line_it_did_not_touch(
    memory: Memory, before: str, line: int, text: str, after: str
) -> None:
    memory.write_file("notes/i.md", before)
    result = memory.insert_lines("notes/i.md", line, text)
    assert memory.read_file("notes/i.md") == after
    assert result.content == after
    assert result.sha256 == content_sha256(after)


def test_insert_out_of_range_or_into_a_missing_file_says_what_to_pass(memory: Memory) -> None:
    memory.write_file("notes/i.md", "a\nb\n")
    with pytest.raises(InvalidInputError, match=r"pass a line from 0 .* to 2"):
        memory.insert_lines("notes/i.md", 3, "x")
    with pytest.raises(InvalidInputError, match="0 or more"):
        memory.insert_lines("notes/i.md", -1, "x")
    with pytest.raises(NotFoundError):
        memory.insert_lines("notes/none.md", 0, "x")
    with pytest.raises(ConflictError):
        memory.insert_lines("notes/i.md", 0, "x", expected_sha256=content_sha256("other"))
    assert memory.read_file("notes/i.md") == "a\nb\n"


def test_rename_moves_the_file_and_the_index_never_over_another(memory: Memory) -> None:
    memory.write_file("notes/old.md", "zebra migration plan\n")
    memory.write_file("notes/taken.md", "keep me\n")
    assert paths_found(memory, "zebra migration") == ["notes/old.md"]
    with pytest.raises(ConflictError, match="already exists"):
        memory.rename_file("notes/old.md", "notes/taken.md")
    assert memory.read_file("notes/taken.md") == "keep me\n"
    assert memory.rename_file("notes/old.md", "archive/new.md") == (
        "notes/old.md",
        "archive/new.md",
    )
    assert not memory.workspace.has_file("notes/old.md")
    assert memory.read_file("archive/new.md") == "zebra migration plan\n"
    assert paths_found(memory, "zebra migration") == ["archive/new.md"]
    with pytest.raises(NotFoundError):
        memory.rename_file("notes/old.md", "notes/again.md")


def test_delete_with_a_hash_and_the_index_forgets_the_file(memory: Memory) -> None:
    memory.write_file("notes/d.md", "quokka sighting\n")
    assert paths_found(memory, "quokka sighting") == ["notes/d.md"]
    with pytest.raises(ConflictError):
        memory.delete_file("notes/d.md", expected_sha256=content_sha256("other"))
    memory.delete_file("notes/d.md", expected_sha256=content_sha256("quokka sighting\n"))
    assert paths_found(memory, "quokka sighting") == []


@pytest.mark.parametrize("hostile", ["../x.md", "/etc/x.md", "notes/x.txt", "a/../../x.md"])
def test_hostile_paths_are_refused_everywhere(memory: Memory, hostile: str) -> None:
    memory.write_file("notes/ok.md", "ok\n")
    with pytest.raises(InvalidPathError):
        memory.write_file(hostile, "x", create_only=True)
    with pytest.raises(InvalidPathError):
        memory.insert_lines(hostile, 0, "x")
    with pytest.raises(InvalidPathError):
        memory.rename_file("notes/ok.md", hostile)
    with pytest.raises(InvalidPathError):
        memory.delete_file(hostile, expected_sha256="0" * 64)
    assert memory.read_file("notes/ok.md") == "ok\n"


def test_a_symlink_out_of_the_workspace_is_refused(memory: Memory, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (memory.workspace.root / "link").symlink_to(outside)
    memory.write_file("notes/ok.md", "ok\n")
    with pytest.raises(InvalidPathError):
        memory.rename_file("notes/ok.md", "link/stolen.md")
    assert list(outside.iterdir()) == []


def test_a_credential_is_refused_by_every_primitive(memory: Memory) -> None:
    memory.write_file("notes/s.md", "safe\n")
    with pytest.raises(SecretRejectedError):
        memory.write_file("notes/n.md", f"key {AWS_KEY}\n", create_only=True)
    with pytest.raises(SecretRejectedError):
        memory.insert_lines("notes/s.md", 1, f"key {AWS_KEY}")
    seen = memory.read_text("notes/s.md").sha256
    with pytest.raises(SecretRejectedError):
        memory.write_file("notes/s.md", f"key {AWS_KEY}\n", expected_sha256=seen)
    assert memory.read_file("notes/s.md") == "safe\n"
    assert not memory.workspace.has_file("notes/n.md")
