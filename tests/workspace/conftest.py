"""Helpers for the workspace tests: a seeded home and a snapshot of a folder tree."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memdir.workspace import Workspace


def snapshot_tree(root: Path) -> dict[str, str | bytes]:
    """Every entry under ``root`` (symlinks not followed) with its content or link target."""
    tree: dict[str, str | bytes] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                tree[relative] = "symlink -> " + os.readlink(path)
            elif path.is_dir():
                tree[relative] = "folder"
            else:
                tree[relative] = path.read_bytes()
    return tree


@pytest.fixture
def snapshot() -> Callable[[Path], dict[str, str | bytes]]:
    return snapshot_tree


@pytest.fixture
def global_ws(home: Path) -> Workspace:
    workspace = Workspace(home)
    workspace.seed()
    return workspace


@pytest.fixture
def agent_ws(home: Path, global_ws: Workspace) -> Workspace:
    workspace = Workspace(home, "coder")
    workspace.seed(name="Coder", description="Writes and reviews code.")
    return workspace
