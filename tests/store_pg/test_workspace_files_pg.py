"""Workspace files in PostgreSQL: exact import/export round trips, refusals, conflicts, the CLI."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
import typer
from pgserver_support import TestServer
from typer.testing import CliRunner

from memdir.errors import InvalidInputError, InvalidPathError
from memdir.interfaces.cli import transfer
from memdir.interfaces.cli._app import make_app
from memdir.progress import ProgressUpdate
from memdir.store.postgres import PostgresStore
from memdir.store.postgres.files import (
    PostgresFileTable,
    export_to_directory,
    import_from_directory,
)
from memdir.workspace import validate_relative_path

WORKER = Path(__file__).with_name("pg_import_worker.py")
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NAME_CHARS = "abcxyzQRS0189-_ .éüßжΩ日本語🐱"
Tree = dict[str, bytes]  # home-relative path -> bytes


@pytest.fixture
def table(pg_server: TestServer, pg_schema: str) -> Iterator[PostgresFileTable]:
    with PostgresFileTable.open(pg_server.dsn, pg_schema) as opened:
        yield opened


def _name(rng: random.Random, suffix: str) -> str:
    while True:
        stem = "".join(rng.choice(NAME_CHARS) for _ in range(rng.randint(1, 14)))
        name = stem.strip(" .") + suffix
        if not stem.strip(" .") or name.endswith(".md") != (suffix == ".md"):
            continue
        try:
            validate_relative_path(name if suffix else name + "/x.md")
        except InvalidPathError:
            continue
        return name


def _content(rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        return b""
    if kind == 1:
        return "# Notiz 🐱\r\n- gespeichert: ✓\r\n".encode() * rng.randint(1, 5)
    if kind == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 400)))  # not UTF-8, NULs
    return "\n".join(f"- line {i} 日本語" for i in range(rng.randint(1, 50))).encode()


def _random_home(home: Path, seed: int) -> Tree:
    """Global workspace and three agents, nested memory/ folders, unicode names, raw bytes."""
    rng = random.Random(seed)
    tree: Tree = {}
    for root in ["workspace", "agents/coder", "agents/writer-2", "agents/x_9"]:
        tree[f"{root}/MEMORY.md"] = _content(rng)
        for _ in range(rng.randint(4, 9)):
            folders = [_name(rng, "") for _ in range(rng.randint(0, 3))]
            tree["/".join([root, "memory", *folders, _name(rng, ".md")])] = _content(rng)
    for relative, data in tree.items():
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (home / "memdir.toml").write_text("[store]\n")  # not workspace Markdown: stays home
    (home / "workspace" / "notes.txt").write_text("not markdown")
    (home / "workspace" / ".hidden.md").write_text("hidden entries are skipped")
    return tree


def _markdown_tree(home: Path) -> Tree:
    return {
        p.relative_to(home).as_posix(): p.read_bytes()
        for p in home.rglob("*.md")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(home).parts)
    }


@pytest.mark.parametrize("seed", [1, 2])
def test_round_trip_is_exact(
    table: PostgresFileTable, pg_server: TestServer, pg_schema: str, tmp_path: Path, seed: int
) -> None:
    source_home, copy_home = tmp_path / "a", tmp_path / "b"
    tree = _random_home(source_home, seed)
    imported: list[ProgressUpdate] = []
    report = import_from_directory(table, source_home, progress=imported.append)
    assert report.counts["created"] == len(tree)
    assert [(u.done, u.total) for u in imported][-1] == (len(tree), len(tree))
    assert report.ok
    assert {i.source for i in table.list_files()} == {
        "global", "agent:coder", "agent:writer-2", "agent:x_9"
    }  # fmt: skip

    sent: list[ProgressUpdate] = []
    exported = export_to_directory(table, copy_home, progress=sent.append)
    assert exported.counts["created"] == len(tree)
    assert [u.done for u in sent] == list(range(1, len(tree) + 1))
    assert _markdown_tree(copy_home) == tree
    for relative in tree:  # mtimes travel too (to the microsecond)
        a, b = (source_home / relative).stat(), (copy_home / relative).stat()
        assert a.st_mtime_ns // 1000 == b.st_mtime_ns // 1000
    assert not (copy_home / "memdir.toml").exists()
    assert not (copy_home / "workspace" / ".hidden.md").exists()

    assert import_from_directory(table, source_home).counts["unchanged"] == len(tree)
    assert export_to_directory(table, copy_home).counts["unchanged"] == len(tree)
    fresh_schema = pg_schema + "_b"
    try:
        with PostgresFileTable.open(pg_server.dsn, fresh_schema) as fresh:
            import_from_directory(fresh, copy_home)
            assert fresh.list_files() == table.list_files()
    finally:
        PostgresStore.delete(pg_server.dsn, fresh_schema)


def test_put_get_list_delete(table: PostgresFileTable) -> None:
    data = "# Ünïcode\n".encode() + b"\x00\xff raw\r\n"
    assert table.put("agent:coder", "memory/a/b.md", data, updated_at=T0) == "created"
    assert table.put("agent:coder", "memory/a/b.md", data) == "unchanged"
    stored = table.get("agent:coder", "memory/a/b.md")
    assert stored is not None
    assert stored.content == data
    assert (stored.info.sha256, stored.info.size) == (hashlib.sha256(data).hexdigest(), len(data))
    assert stored.info.updated_at == T0
    older = T0 - timedelta(hours=1)
    assert table.put("agent:coder", "memory/a/b.md", b"old", updated_at=older, keep_newer=True) == (
        "kept"
    )
    assert table.put("agent:coder", "memory/a/b.md", b"new", updated_at=older) == "updated"
    table.put("global", "MEMORY.md", b"g")
    assert [i.path for i in table.list_files("agent:coder")] == ["memory/a/b.md"]
    assert [(i.source, i.path) for i in table.list_files()] == [
        ("agent:coder", "memory/a/b.md"),
        ("global", "MEMORY.md"),
    ]
    assert table.delete("global", "MEMORY.md")
    assert not table.delete("global", "MEMORY.md")
    assert table.get("global", "MEMORY.md") is None
    for source, path in [("global", "../x.md"), ("global", "./x.md"), ("global", "x.txt")]:
        with pytest.raises(InvalidPathError):
            table.put(source, path, b"")
    for source in ["agent:../x", "agent:Coder", "other"]:
        with pytest.raises(InvalidInputError):
            table.put(source, "x.md", b"")


def _insert_raw(dsn: str, schema: str, rows: list[tuple[str, str]]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for source, path in rows:
            conn.execute(
                f'INSERT INTO "{schema}".workspace_files VALUES (%s, %s, %s, %s, 5, now())',
                (source, path, b"owned", hashlib.sha256(b"owned").hexdigest()),
            )


def _all_files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


HOSTILE = [
    ("global", "../escape.md"),
    ("global", "/abs.md"),
    ("global", "memory/../../up.md"),
    ("global", "a\\b.md"),
    ("global", "C:/drive.md"),
    ("global", "notes.txt"),
    ("global", "./MEMORY.md"),
    ("global", "memory//x.md"),
    ("global", "con.md"),
    ("global", "bad\x01name.md"),
    ("global", "link/inside.md"),
    ("agent:../../etc", "x.md"),
    ("agent:BAD", "x.md"),
    ("agent:", "x.md"),
    ("elsewhere", "x.md"),
]


def test_hostile_rows_are_refused_on_export(
    table: PostgresFileTable, pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    home, outside = tmp_path / "home", tmp_path / "outside"
    outside.mkdir()
    (home / "workspace").mkdir(parents=True)
    (home / "workspace" / "link").symlink_to(outside)  # a symlink leading out of the workspace
    table.put("global", "ok.md", b"fine")
    _insert_raw(pg_server.dsn, pg_schema, HOSTILE)
    before = _all_files(tmp_path)
    report = export_to_directory(table, home)
    assert _all_files(tmp_path) - before == {home / "workspace" / "ok.md"}
    refused = {(i.source, i.path) for i in report.items if i.action == "refused"}
    assert refused == set(HOSTILE)
    assert report.counts["created"] == 1
    assert not report.ok
    assert all(i.detail for i in report.items if i.action == "refused")


def test_import_refuses_bad_agent_folders_and_names(table: PostgresFileTable, home: Path) -> None:
    (home / "agents" / "Bad Agent").mkdir(parents=True)
    (home / "agents" / "Bad Agent" / "MEMORY.md").write_text("x")
    (home / "workspace").mkdir(parents=True)
    (home / "workspace" / "con.md").write_text("reserved name")
    (home / "workspace" / "fine.md").write_text("ok")
    report = import_from_directory(table, home)
    assert {(i.source, i.path, i.action) for i in report.items} == {
        ("agent:Bad Agent", "", "refused"),
        ("global", "con.md", "refused"),
        ("global", "fine.md", "created"),
    }
    assert [i.path for i in table.list_files()] == ["fine.md"]


def _touch(path: Path, data: bytes, when: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    stamp = int(when.timestamp() * 1_000_000) * 1000
    os.utime(path, ns=(stamp, stamp))


def test_newer_files_are_kept_unless_forced(table: PostgresFileTable, home: Path) -> None:
    local = home / "workspace" / "MEMORY.md"
    table.put("global", "MEMORY.md", b"database v1", updated_at=T0)
    _touch(local, b"local edit", T0 + timedelta(hours=1))
    assert export_to_directory(table, home, dry_run=True).counts["kept"] == 1
    assert export_to_directory(table, home).counts["kept"] == 1
    assert local.read_bytes() == b"local edit"
    assert export_to_directory(table, home, force=True, dry_run=True).counts["updated"] == 1
    assert local.read_bytes() == b"local edit"  # a dry run writes nothing
    assert export_to_directory(table, home, force=True).counts["updated"] == 1
    assert local.read_bytes() == b"database v1"

    table.put("global", "MEMORY.md", b"database v2", updated_at=T0 + timedelta(hours=3))
    _touch(local, b"stale local", T0 + timedelta(hours=2))
    assert import_from_directory(table, home).counts["kept"] == 1
    assert import_from_directory(table, home, dry_run=True, force=True).counts["updated"] == 1
    stored = table.get("global", "MEMORY.md")
    assert stored is not None
    assert stored.content == b"database v2"
    assert import_from_directory(table, home, force=True).counts["updated"] == 1
    stored = table.get("global", "MEMORY.md")
    assert stored is not None
    assert (stored.content, stored.info.updated_at) == (b"stale local", T0 + timedelta(hours=2))


def test_a_dry_run_import_writes_nothing(table: PostgresFileTable, home: Path) -> None:
    _touch(home / "agents" / "coder" / "memory" / "a.md", b"a", T0)
    report = import_from_directory(table, home, dry_run=True)
    assert [(i.source, i.path, i.action) for i in report.items] == [
        ("agent:coder", "memory/a.md", "created")
    ]
    assert report.summary().startswith("dry run, nothing written")
    assert table.list_files() == []


def _cli() -> typer.Typer:
    app = make_app("test app")

    @app.callback()
    def _root() -> None:
        """Root."""

    transfer.register(app)
    return app


def test_cli_import_export_dry_run_and_errors(
    pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    app, runner = _cli(), CliRunner()
    first, second = tmp_path / "first", tmp_path / "second"
    _touch(first / "workspace" / "memory" / "2026-03-01.md", "- Luna 🐱\n".encode(), T0)
    _touch(first / "agents" / "coder" / "MEMORY.md", b"# coder\n", T0)
    target = ["--dsn", pg_server.dsn, "--schema", pg_schema]

    dry = runner.invoke(app, ["import", *target, "--dry-run"], env={"MEMDIR_HOME": str(first)})
    assert dry.exit_code == 0, dry.output
    assert "would be created: global memory/2026-03-01.md" in dry.stdout
    done = runner.invoke(app, ["import", *target, "--json"], env={"MEMDIR_HOME": str(first)})
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["counts"]["created"] == 2

    out = runner.invoke(app, ["export", *target], env={"MEMDIR_HOME": str(second)})
    assert out.exit_code == 0, out.output
    assert "2 created" in out.stdout
    assert _markdown_tree(second) == _markdown_tree(first)

    missing = runner.invoke(app, ["export"], env={"MEMDIR_HOME": str(second)})
    assert missing.exit_code == 1
    assert "store.dsn" in missing.stderr
    clash = runner.invoke(
        app, ["export", "--dsn", pg_server.dsn, "--schema", "memdir"],
        env={"MEMDIR_HOME": str(second)},
    )  # fmt: skip
    assert clash.exit_code == 1
    assert "index rebuild" in clash.stderr


def test_cli_exits_1_when_rows_are_refused(
    table: PostgresFileTable, pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    _insert_raw(pg_server.dsn, pg_schema, [("global", "../escape.md")])
    result = CliRunner().invoke(
        _cli(), ["export", "--dsn", pg_server.dsn, "--schema", pg_schema],
        env={"MEMDIR_HOME": str(tmp_path / "h")},
    )  # fmt: skip
    assert result.exit_code == 1
    assert "refused: global ../escape.md" in result.stdout
    assert not (tmp_path / "escape.md").exists()


@pytest.mark.slow
def test_two_processes_import_one_home_at_once(
    pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    tree = _random_home(home, seed=7)
    for n in range(120):
        _touch(home / "agents" / "bulk" / "memory" / f"n{n:03}.md", f"note {n}\n".encode(), T0)
    total = len(tree) + 120
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), pg_server.dsn, pg_schema, str(home), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    go.touch()
    counts = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        assert "Traceback" not in err
        counts.append(json.loads(out))
    assert counts[0]["created"] + counts[1]["created"] == total
    assert counts[0]["unchanged"] + counts[1]["unchanged"] == total
    assert all(c["failed"] == c["refused"] == c["kept"] == c["updated"] == 0 for c in counts)
    with PostgresFileTable.open(pg_server.dsn, pg_schema) as table:
        assert len(table.list_files()) == total
        export_to_directory(table, tmp_path / "copy")
    assert _markdown_tree(tmp_path / "copy") == _markdown_tree(home)
