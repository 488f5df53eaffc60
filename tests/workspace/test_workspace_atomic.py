"""Atomic writes: exact content, no temp files left, old or new content but never a mix."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from memdir.errors import InvalidInputError
from memdir.workspace import MAX_FILE_BYTES, Workspace, write_atomic


def test_write_atomic_writes_exact_text(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    text = "line one\r\nzwei · drei\n🙂 no trailing newline"
    write_atomic(target, text)
    assert target.read_bytes() == text.encode("utf-8")


def test_write_atomic_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    for round_ in range(20):
        write_atomic(target, f"version {round_}\n")
    assert target.read_text(encoding="utf-8") == "version 19\n"
    assert sorted(os.listdir(tmp_path)) == ["notes.md"]


def test_write_atomic_keeps_the_permission_bits(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    write_atomic(target, "new\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_oversized_write_is_refused_without_touching_the_disk(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_text("original\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="over the limit"):
        write_atomic(target, "x" * (MAX_FILE_BYTES + 1))
    assert target.read_text(encoding="utf-8") == "original\n"
    assert sorted(os.listdir(tmp_path)) == ["notes.md"]


def test_size_limit_counts_utf8_bytes(global_ws: Workspace) -> None:
    global_ws.write_file("big.md", "x" * MAX_FILE_BYTES)
    assert (global_ws.root / "big.md").stat().st_size == MAX_FILE_BYTES
    with pytest.raises(InvalidInputError, match="2 MB"):
        global_ws.write_file("wide.md", "é" * (MAX_FILE_BYTES // 2 + 1))
    assert not (global_ws.root / "wide.md").exists()


def test_failed_write_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "folder.md"
    target.mkdir()  # os.replace cannot put a file over a folder
    with pytest.raises(OSError, match="directory"):
        write_atomic(target, "text")
    assert sorted(os.listdir(tmp_path)) == ["folder.md"]


def test_readers_see_old_or_new_content_never_a_mix(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    versions = ["A" * 200_000, "B" * 300_000]
    write_atomic(target, versions[0])
    seen: set[str] = set()
    stop = threading.Event()

    def read_repeatedly() -> None:
        while not stop.is_set():
            seen.add(target.read_text(encoding="utf-8"))

    reader = threading.Thread(target=read_repeatedly)
    reader.start()
    try:
        for round_ in range(60):
            write_atomic(target, versions[round_ % 2])
    finally:
        stop.set()
        reader.join()
    assert seen <= set(versions)
    assert sorted(os.listdir(tmp_path)) == ["notes.md"]
