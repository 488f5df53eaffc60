"""A real SQLite index of small real workspaces, built through the real sync."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.index import SourceFile, sync_files
from memdir.store import SqliteStore

NOTES = {
    "MEMORY.md": "# Memory\n\n- The user prefers tea over coffee.\n- Deploys happen on Tuesdays.\n",
    "memory/2024-01-02.md": (
        "# 2024-01-02\n"
        "\n"
        "## Standup\n"
        "\n"
        "- Alice migrated the billing service to postgres.\n"
        "- Bruno fixed the flaky checkout test.\n"
        "- Chen planned the kafka upgrade for the ingest pipeline.\n"
        "\n"
        "## Notes\n"
        "\n"
        "The dashboard was slow because of a missing index on orders.\n"
    ),
    "memory/2024-03-05.md": (
        "# 2024-03-05\n\n- Dara adopted a cat named Miso.\n- Lunch at the ramen place.\n"
    ),
}

Index = Callable[..., SqliteStore]


def write_files(root: Path, files: dict[str, str]) -> list[SourceFile]:
    out = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(SourceFile("global", rel, path))
    return out


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder(64)


@pytest.fixture
def make_index(tmp_path: Path, embedder: HashEmbedder) -> Iterator[Index]:
    stores: list[SqliteStore] = []

    def build(files: dict[str, str], with_vectors: bool = True) -> SqliteStore:
        root = tmp_path / f"ws{len(stores)}"
        store = SqliteStore.open(tmp_path / f"index{len(stores)}.sqlite")
        stores.append(store)
        sources = write_files(root, files)
        sync_files(store, embedder if with_vectors else None, sources, sources=["global"])
        return store

    yield build
    for store in stores:
        store.close()


@pytest.fixture
def notes() -> dict[str, str]:
    return dict(NOTES)


@pytest.fixture
def notes_store(make_index: Index) -> SqliteStore:
    return make_index(NOTES)
