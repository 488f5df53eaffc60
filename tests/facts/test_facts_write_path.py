"""The write path of a save: one event, embedded once, nothing read back, searchable at once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.facts import FactBook
from memdir.index.chunking import text_sha256
from memdir.memory import Memory

PROC_IO = Path("/proc/self/io")


def bytes_read() -> int:
    """Bytes this process has read through read() calls so far (Linux)."""
    for line in PROC_IO.read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_a_save_embeds_its_text_once_for_the_facts_and_the_index(home: Path) -> None:
    embedder = HashEmbedder(64, record=True)
    text = "The billing service moved to PostgreSQL sixteen in March"
    with Memory.open(home, embedder=embedder) as memory:
        memory.init()
        memory.search("warm up the index")  # the first search of a process syncs everything
        assert embedder.calls is not None
        embedder.calls.clear()
        saved = memory.save(text)
        texts = [t for call in embedder.calls for t in call]
        assert texts.count(text) == 1, embedder.calls  # the fact's row and its line's block
        # and no other text holds it: the note's chunk takes its vector from its blocks'
        assert [t for t in texts if text in t and t != text] == []
        assert saved.location is not None
        key = text_sha256("block", (), text)
        identity = memory.store.stats().identity
        assert identity is not None
        cached = memory.store.cached_vectors(identity, [key])
        assert key in cached  # the block of the saved line carries the fact's vector
        np.testing.assert_allclose(cached[key], embedder.embed_query(text), atol=1e-6)
        embedder.calls.clear()
        hits = memory.search("billing PostgreSQL sixteen", fresh=False)  # no sync at all
        assert hits[0].citation == saved.location.cite()


def test_a_save_reads_nothing_of_a_large_note_back(home: Path) -> None:
    if not PROC_IO.exists():
        pytest.skip("needs /proc/self/io (Linux)")
    with FactBook.open(home, HashEmbedder(64)) as book:
        first = book.save("The deploy window opens on Tuesdays at nine")
        assert first.location is not None
        note = book.workspace.root / first.location.path
        with note.open("a", encoding="utf-8") as out:  # 2 MB written by hand
            out.write("".join(f"\n- plain entry {n} with some words\n" for n in range(50_000)))
        book.sync()  # the recovery walk reads the changed note once
        book.save("The staging database listens on port 5433")  # reads the note once more
        size = note.stat().st_size
        assert size > 1_500_000
        before = bytes_read()
        third = book.save("The release train leaves every second Thursday")
        read = bytes_read() - before
    assert third.location is not None
    assert third.location.start_line > 50_000
    assert read < size // 20, f"a save read {read} bytes of a {size}-byte note"
