"""A damaged index is detected and rebuilt from the files; bad files never stop the rest.

The index database is derived: deleting, truncating or overwriting it with
garbage must lose no knowledge. ``Memory`` rebuilds a corrupt database by
itself (with a logged warning); a store used directly raises ``StoreError``
naming ``memdir index rebuild``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support_reliability import fact_rows, hits_of

from memdir.embeddings.base import HashEmbedder
from memdir.errors import StoreError
from memdir.memory import Memory, is_corruption
from memdir.store import SqliteStore

Damage = Callable[[Path], None]


def garbage(db: Path) -> None:
    db.write_bytes(os.urandom(64 * 1024))


def truncated(db: Path) -> None:
    db.write_bytes(db.read_bytes()[:3000])


def deleted(db: Path) -> None:
    db.unlink()


def zeroed_pages(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[4096:12288] = b"\x00" * 8192  # wipe pages after the header
    db.write_bytes(bytes(data))


DAMAGES = {"garbage": garbage, "truncated": truncated, "deleted": deleted, "zeroed": zeroed_pages}


def populated(home: Path) -> tuple[list[object], list[object]]:
    """A home with notes, facts and a built index; returns (hits, facts) before damage."""
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.init()
        memory.append_daily("We decided to use PostgreSQL for the billing service.")
        memory.write_file("memory/projects.md", "# Projects\n\n## Billing\n\nUses Stripe.\n")
        memory.save("The user prefers green tea in the morning.")
        memory.save("The user's dog is called Pixel.")
        memory.rebuild()  # what a rebuild gives (neighbours are found by unit id: an index
        before = (hits_of(memory, "billing PostgreSQL"), fact_rows(memory))  # built by parts
        # numbers its units in another order)
    db = home / "index" / "memdir.db"
    for companion in db.parent.glob("memdir.db-*"):
        companion.unlink()  # a checkpointed, closed database: all of it is in the main file
    return before


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_sync_rebuilds_a_damaged_index(
    home: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    hits, facts = populated(home)
    DAMAGES[damage](home / "index" / "memdir.db")
    with caplog.at_level(logging.WARNING), Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.sync()
        assert hits_of(memory, "billing PostgreSQL") == hits
        assert [row[1:] for row in fact_rows(memory)] == [row[1:] for row in facts]
    if damage in ("garbage", "truncated"):
        assert "rebuilding it from the Markdown files" in caplog.text


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
@pytest.mark.parametrize("call", ["search", "recall", "system_prompt"])
def test_reads_recover_a_damaged_index(home: Path, damage: str, call: str) -> None:
    populated(home)
    DAMAGES[damage](home / "index" / "memdir.db")
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        if call == "search":
            assert memory.search("PostgreSQL billing").hits
        elif call == "recall":
            assert memory.recall("green tea")
        else:
            assert "green tea" in memory.system_prompt()


def read_everything(db: Path) -> None:
    store = SqliteStore.open(db)
    try:
        store.stats()
        store.file_stamps(["global"])
    finally:
        store.close()


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_the_store_names_the_rebuild_command(home: Path, damage: str) -> None:
    populated(home)
    db = home / "index" / "memdir.db"
    DAMAGES[damage](db)
    with pytest.raises(StoreError, match="memdir index rebuild") as caught:
        read_everything(db)
    assert is_corruption(caught.value)
    assert str(db) in str(caught.value)


def test_a_lock_is_never_taken_for_corruption() -> None:
    locked = StoreError("the index database stayed locked")
    locked.__cause__ = type("OperationalError", (Exception,), {})("database is locked")
    assert not is_corruption(locked)
    malformed = StoreError("unreadable")
    malformed.__cause__ = type("DatabaseError", (Exception,), {})(
        "database disk image is malformed"
    )
    assert is_corruption(malformed)


def test_unreadable_files_are_listed_and_the_rest_served(home: Path) -> None:
    with Memory.open(
        home, embedder=HashEmbedder(), overrides={"index": {"max_file_bytes": 100_000}}
    ) as memory:
        memory.init()
        memory.write_file("memory/good.md", "# Good\n\nThe launch is on Friday.\n")
        mem = memory.workspace.root / "memory"
        (mem / "latin1.md").write_bytes("caf\xe9 notes\n".encode("latin-1"))
        (mem / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(200))
        (mem / "huge.md").write_text("word " * 40_000, encoding="utf-8")
        (mem / "dangling.md").symlink_to(mem / "nowhere.md")
        os.mkfifo(mem / "pipe.md")  # a FIFO would block a naive reader forever
        secret = mem / "locked.md"
        secret.write_text("locked away\n", encoding="utf-8")
        secret.chmod(0)
        report = memory.sync()
        skipped = dict(report.skipped)
        assert "not UTF-8" in skipped["memory/latin1.md"]
        assert "binary" in skipped["memory/binary.md"]
        assert "limit" in skipped["memory/huge.md"]
        if os.geteuid() != 0:  # root reads a mode-000 file anyway
            assert "unreadable" in skipped["memory/locked.md"]
        assert "memory/pipe.md" not in skipped
        assert "memory/dangling.md" not in skipped
        assert next(h.path for h in memory.search("launch Friday").hits) == "memory/good.md"
        assert "skipped memory/latin1.md" in report.summary()


def test_rebuild_sweeps_temp_files_of_killed_writers(memory: Memory) -> None:
    root = memory.workspace.root
    (root / ".history" / "MEMORY.md").mkdir(parents=True)
    stale = [root / ".MEMORY.md.0123456789ab.tmp",
             root / ".history" / "MEMORY.md" / ".20240101T000000Z.md.abcdef012345.tmp"]  # fmt: skip
    fresh = root / "memory" / ".2024-01-01.md.fedcba987654.tmp"
    kept = [root / ".notes.tmp", root / "memory" / "draft.tmp", fresh]
    fresh.parent.mkdir(exist_ok=True)
    for path in [*stale, *kept]:
        path.write_text("half a write", encoding="utf-8")
    for path in stale:
        os.utime(path, (1_000_000_000, 1_000_000_000))  # 2001: long dead
    memory.rebuild()
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)
