"""``blocks_around``: the blocks around a block by line in its file, on both backends,
whatever order their ids were given in (a note written append by append)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memdir.embeddings.base import HashEmbedder
from memdir.store import EmbedderIdentity, FileStamp, FileWrite, Unit

OpenStore = Callable[..., Any]
EMBEDDER = HashEmbedder(32)
IDENTITY = EmbedderIdentity(EMBEDDER.provider, EMBEDDER.model, EMBEDDER.dimensions)


def test_blocks_around_go_by_line_not_by_id(open_store: OpenStore) -> None:
    store = open_store()
    lines = [5, 1, 3, 7]  # written out of line order: ids do not follow lines
    units = [
        Unit("global", "memory/day.md", "block", n, n, f"line {n}", (), f"b{n}") for n in lines
    ]
    units.append(Unit("global", "memory/day.md", "chunk", 1, 7, "all", (), "c"))
    other = [Unit("global", "memory/other.md", "block", 2, 2, "elsewhere", (), "o2")]
    stamp = FileStamp("global", "memory/day.md", "sha", 1, 1)
    store.bind_identity(IDENTITY)
    store.write_files(
        [
            FileWrite(stamp, units, EMBEDDER.embed_documents([u.text for u in units])),
            FileWrite(FileStamp("global", "memory/other.md", "sha2", 1, 1), other,
                      EMBEDDER.embed_documents(["elsewhere"])),
        ],
        identity=IDENTITY,
    )  # fmt: skip
    ids = {(u.path, u.kind, u.start_line): i for i, u in _all(store).items()}
    line = {n: ids[("memory/day.md", "block", n)] for n in lines}
    around = store.blocks_around([line[3], line[1], ids[("memory/day.md", "chunk", 1)]], 2)
    assert around[line[3]] == ((line[1],), (line[5], line[7]))
    assert around[line[1]] == ((), (line[3], line[5]))
    assert around.get(ids[("memory/day.md", "chunk", 1)], ((), ())) == ((), ())
    assert store.blocks_around([line[5]], 1)[line[5]] == ((line[3],), (line[7],))


def _all(store: object) -> dict[int, Unit]:
    units: dict[int, Unit] = store.get_units(range(1, 50))  # type: ignore[attr-defined]
    return units
