"""Serving the workspace from PostgreSQL: two servers, two homes, one database.

``store.workspace_files = "postgres"`` makes the files table the truth and each
home a cache (``memdir.store.postgres.mirror``). Every test here runs "servers"
as ``Memory`` objects (or processes) on homes of their own that share one database.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import psycopg
import pytest
from pgserver_support import TestServer

from memdir import Memory
from memdir.embeddings.base import HashEmbedder
from memdir.errors import ConfigError, NotFoundError
from memdir.llm import Message
from memdir.store.postgres import PostgresStore
from memdir.store.postgres.cache import STATE_DIR, decide_pull
from memdir.store.postgres.files import PostgresFileTable
from memdir.store.postgres.mirror import WorkspaceMirror

WORKER = Path(__file__).with_name("pg_mirror_worker.py")
DAY = datetime(2026, 3, 1)
DAILY = "memory/2026-03-01.md"
OpenServer = Callable[..., Memory]


@pytest.fixture
def files_schema(pg_server: TestServer, pg_schema: str) -> Iterator[str]:
    """The default files schema of ``pg_schema`` (``<schema>_files``), dropped afterwards."""
    yield f"{pg_schema}_files"
    PostgresStore.delete(pg_server.dsn, f"{pg_schema}_files")


def _overrides(dsn: str, schema: str) -> dict[str, dict[str, object]]:
    return {
        "store": {
            "backend": "postgres", "dsn": dsn, "schema_name": schema,
            "workspace_files": "postgres",
        }
    }  # fmt: skip


@pytest.fixture
def open_server(
    pg_server: TestServer, pg_schema: str, files_schema: str, tmp_path: Path
) -> Iterator[OpenServer]:
    """``open_server(name, agent)``: a Memory on the home ``tmp_path/name``, shared database."""
    opened: list[Memory] = []

    def make(name: str, agent: str | None = "coder") -> Memory:
        memory = Memory.open(
            tmp_path / name, agent, overrides=_overrides(pg_server.dsn, pg_schema),
            embedder=HashEmbedder(), chat_model=None,
        )  # fmt: skip
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()


@pytest.fixture
def table(pg_server: TestServer, files_schema: str) -> Iterator[PostgresFileTable]:
    with PostgresFileTable.open(pg_server.dsn, files_schema) as opened:
        yield opened


def _row(table: PostgresFileTable, source: str, path: str) -> bytes | None:
    stored = table.get(source, path)
    return None if stored is None else stored.content


def test_what_one_server_writes_the_other_serves(
    open_server: OpenServer, table: PostgresFileTable, tmp_path: Path
) -> None:
    a, b = open_server("a"), open_server("b")
    open_server("a", None).init()  # the global workspace: AGENTS.md, USER.md, ...
    a.init()
    a.write_file("MEMORY.md", "# Memory\n\n- The billing service runs on PostgreSQL.\n")
    a.edit_file("MEMORY.md", "PostgreSQL", "PostgreSQL 16")
    a.append_daily("We chose Kafka for the billing events.", date=DAY)
    a.write_file("notes/plan.md", "step one\n")
    assert not (tmp_path / "b").exists()  # B starts with an empty home

    memory_md = b.read_file("MEMORY.md")
    assert "PostgreSQL 16" in memory_md
    assert b.get(DAILY).content.endswith("We chose Kafka for the billing events.")
    assert {"MEMORY.md", DAILY, "notes/plan.md", "SOUL.md", "USER.md"} <= set(b.list_files())
    assert "PostgreSQL 16" in b.system_prompt()  # agent files and global fallbacks
    assert b.agents() == ["coder"]
    assert _row(table, "agent:coder", "MEMORY.md") == memory_md.encode()

    b.sync()
    hits = b.search("Kafka billing events")
    assert hits.hits
    assert hits.hits[0].path == DAILY

    a.delete_file("notes/plan.md")
    assert _row(table, "agent:coder", "notes/plan.md") is None
    with pytest.raises(NotFoundError):
        b.read_file("notes/plan.md")
    assert "notes/plan.md" not in b.list_files()
    assert not (tmp_path / "b" / "agents" / "coder" / "notes" / "plan.md").exists()

    b.append_daily("Second server writes too.", date=DAY)
    lines = a.read_file(DAILY)
    assert "Kafka" in lines
    assert "Second server writes too." in lines


def test_facts_saved_on_one_server_are_in_the_daily_note_on_the_other(
    open_server: OpenServer,
) -> None:
    a, b = open_server("a"), open_server("b")
    a.save("The release train leaves on Thursdays", category="decision")
    notes = [b.read_file(path) for path in b.list_files("memory/")]
    assert any("The release train leaves on Thursdays" in note for note in notes)
    assert [f.text for f in b.list_facts()] == ["The release train leaves on Thursdays"]


def test_an_extraction_saves_its_facts_inside_its_own_write(open_server: OpenServer) -> None:
    a, b = open_server("a"), open_server("b")
    a.session("s1").extend(
        [
            Message("user", "Hi, I have a new cat."),
            Message("assistant", "Congratulations!"),
            Message("user", "please remember: my cat is Luna"),
            Message("assistant", "Noted."),
        ]
    )
    result = a.extract("s1")  # a write whose nested save() runs under the same lock
    assert result.facts_saved == 1
    assert [f.text for f in b.list_facts()] == ["My cat is Luna"]
    notes = "".join(b.read_file(path) for path in b.list_files("memory/"))
    assert "My cat is Luna" in notes
    with pytest.raises(NotFoundError):
        b.extract("s1")  # sessions stay on the server that recorded them


def test_rebuild_and_cross_agent_search_see_every_agent_of_the_table(
    open_server: OpenServer, tmp_path: Path
) -> None:
    open_server("a", "coder").append_daily("The coder writes Rust all day.", date=DAY)
    open_server("a", "writer").append_daily("The writer drafts in Markdown.", date=DAY)
    b = open_server("b", None)
    assert b.agents() == ["coder", "writer"]
    report = b.rebuild()
    assert report.added == 2
    assert (tmp_path / "b" / "agents" / "writer" / DAILY).is_file()
    hits = b.search("Rust all day", scope="all")
    assert [h.source for h in hits.hits][:1] == ["agent:coder"]


@pytest.mark.slow
def test_appends_from_two_processes_lose_nothing(
    pg_server: TestServer, pg_schema: str, table: PostgresFileTable, tmp_path: Path
) -> None:
    count = 12
    go = tmp_path / "go"
    env = {**os.environ, "MEMDIR_STORE__WORKSPACE_FILES": "postgres"}
    args = [pg_server.dsn, pg_schema]
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                str(WORKER),
                *args,
                str(tmp_path / name),
                "coder",
                name,
                str(count),
                str(go),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in ("alpha", "beta")
    ]
    go.touch()
    for worker in workers:
        _out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err

    content = _row(table, "agent:coder", DAILY)
    assert content is not None
    lines = content.decode().split("\n")
    for name in ("alpha", "beta"):
        for i in range(count):
            assert lines.count(f"{name} line {i}") == 1, (name, i, lines)
    for name in ("alpha", "beta"):  # each cache ends equal to the table or one write behind
        assert (tmp_path / name / "agents" / "coder" / DAILY).is_file()


def test_a_hostile_row_is_refused_and_nothing_lands_outside_the_home(
    open_server: OpenServer,
    table: PostgresFileTable,
    pg_server: TestServer,
    files_schema: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    a = open_server("a")
    a.write_file("MEMORY.md", "fine\n")
    bad = [
        ("agent:coder", "../../../escape.md"),
        ("agent:coder", "/tmp/absolute-escape.md"),
        ("agent:coder", "memory/../../escape2.md"),
        ("agent:coder", "notes.txt"),
        ("agent:../../x", "escape3.md"),
        ("global", "./MEMORY.md"),
    ]
    with psycopg.connect(pg_server.dsn, autocommit=True) as conn:
        for source, path in bad:
            conn.execute(
                f'INSERT INTO "{files_schema}".workspace_files '
                "(source, path, content, sha256, size, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, now())",
                (source, path, b"pwned\n", hashlib.sha256(b"pwned\n").hexdigest(), 6),
            )
    outside = tmp_path / "outside"
    outside.mkdir()
    home_b = tmp_path / "b"
    (home_b / "agents" / "coder").mkdir(parents=True)
    (home_b / "agents" / "coder" / "memory").symlink_to(outside)  # a cache link leading out
    with psycopg.connect(pg_server.dsn, autocommit=True) as conn:
        conn.execute(
            f'INSERT INTO "{files_schema}".workspace_files '
            "(source, path, content, sha256, size, updated_at) VALUES (%s, %s, %s, %s, %s, now())",
            ("agent:coder", "memory/via-link.md", b"pwned\n", "0" * 64, 6),
        )

    b = open_server("b")
    with caplog.at_level(logging.WARNING, logger="memdir.store.postgres.mirror"):
        assert b.read_file("MEMORY.md") == "fine\n"
        with WorkspaceMirror.open(pg_server.dsn, files_schema, home_b) as mirror:
            report = mirror.pull(None)
    assert "refusing workspace file agent:coder '../../../escape.md'" in caplog.text
    assert "delete or rename that row" in caplog.text
    assert set(report.refused) == {f"{s}:{p}" for s, p in bad} | {"agent:coder:memory/via-link.md"}
    written = [
        p for p in tmp_path.rglob("*") if p.is_file() and "pwned" in p.read_text(errors="replace")
    ]
    assert written == []
    assert list(outside.iterdir()) == []
    assert not Path("/tmp/absolute-escape.md").exists()
    assert b.agents() == ["coder"]  # the bad source is not an agent


def test_local_edits_are_pushed_unless_the_table_changed_too(
    open_server: OpenServer, table: PostgresFileTable, tmp_path: Path
) -> None:
    a, b = open_server("a"), open_server("b")
    a.write_file("MEMORY.md", "v1\n")
    assert b.read_file("MEMORY.md") == "v1\n"
    cached = tmp_path / "b" / "agents" / "coder" / "MEMORY.md"

    cached.write_text("edited by hand on b\n")  # the table has not changed: kept, then pushed
    assert b.read_file("MEMORY.md") == "edited by hand on b\n"
    b.append_daily("any write pushes", date=DAY)
    assert _row(table, "agent:coder", "MEMORY.md") == b"edited by hand on b\n"

    cached.write_text("edited by hand again\n")  # and the table changes too: the table wins
    a.write_file("MEMORY.md", "v2 from a\n")
    assert b.read_file("MEMORY.md") == "v2 from a\n"
    saved = list((cached.parent / STATE_DIR / "conflicts").glob("MEMORY.md.*"))
    assert [p.read_text() for p in saved] == ["edited by hand again\n"]


def test_a_thrown_away_cache_is_pulled_again_and_deletes_nothing(
    open_server: OpenServer, table: PostgresFileTable, tmp_path: Path
) -> None:
    a = open_server("a")
    a.init()
    a.append_daily("keep me", date=DAY)
    before = {i.path for i in table.list_files("agent:coder")}
    shutil.rmtree(tmp_path / "a" / "agents")
    a.write_file("notes/new.md", "new\n")
    assert {i.path for i in table.list_files("agent:coder")} == before | {"notes/new.md"}
    assert "keep me" in a.read_file(DAILY)


def test_files_that_are_not_markdown_stay_local(
    open_server: OpenServer, table: PostgresFileTable, tmp_path: Path
) -> None:
    a = open_server("a")
    a.write_file("MEMORY.md", "x\n")
    root = tmp_path / "a" / "agents" / "coder"
    (root / "diagram.png").write_bytes(b"\x89PNG")
    a.delete_file("MEMORY.md")
    assert (root / "diagram.png").read_bytes() == b"\x89PNG"
    assert [(i.source, i.path) for i in table.list_files()] == []


@pytest.mark.parametrize(
    ("row", "base", "local", "action"),
    [
        ("r", "r", "r", "same"),
        ("r2", "r", "r", "fetch"),  # changed in the table only
        ("r", "r", "l", "keep"),  # changed locally only: pushed by the next write
        ("r2", "r", "l", "conflict"),  # both: the table wins, the local copy is saved
        ("r", None, "l", "conflict"),  # never pulled and different
        ("r", None, None, "fetch"),
        ("r", "r", None, "keep"),  # deleted locally only
        ("r2", "r", None, "fetch"),  # deleted locally, changed in the table
        (None, "r", "r", "remove"),  # deleted in the table only
        (None, "r", "l", "keep"),  # deleted in the table, changed locally
        (None, "r", None, "forget"),
    ],
)
def test_decide_pull(row: str | None, base: str | None, local: str | None, action: str) -> None:
    assert decide_pull(row, base, local) == action


def test_workspace_files_postgres_needs_the_postgres_backend_and_a_dsn(home: Path) -> None:
    with pytest.raises(ConfigError, match=r"store\.backend = 'postgres' and store\.dsn"):
        Memory.open(home, overrides={"store": {"workspace_files": "postgres"}})
    with pytest.raises(ConfigError, match="MEMDIR_STORE__DSN"):
        Memory.open(
            home, overrides={"store": {"workspace_files": "postgres", "backend": "postgres"}}
        )
    with pytest.raises(ConfigError, match="is the index schema"):
        Memory.open(home, overrides={"store": {"files_schema": "memdir"}})


def test_the_environment_selects_postgres_files(
    pg_server: TestServer,
    pg_schema: str,
    table: PostgresFileTable,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMDIR_STORE__WORKSPACE_FILES", "postgres")
    monkeypatch.setenv("MEMDIR_STORE__BACKEND", "postgres")
    monkeypatch.setenv("MEMDIR_STORE__DSN", pg_server.dsn)
    monkeypatch.setenv("MEMDIR_STORE__SCHEMA_NAME", pg_schema)
    with Memory.open(home, "coder", embedder=None, chat_model=None) as memory:
        assert memory.settings.store.files_schema_name == f"{pg_schema}_files"
        memory.write_file("MEMORY.md", "from the environment\n")
    assert _row(table, "agent:coder", "MEMORY.md") == b"from the environment\n"
