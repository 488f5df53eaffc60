"""The index store contract and the sync paths, run against SQLite and PostgreSQL alike."""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from keyword_support import keyword_hits, words
from memdir.embeddings.base import HashEmbedder
from memdir.errors import IndexMismatchError
from memdir.index import SourceFile, rebuild_index, sync_files
from memdir.search import SearchOptions, search
from memdir.store import EmbedderIdentity, FileStamp, FileWrite, KeywordQuery, Unit, UnitKind

OpenStore = Callable[..., Any]


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting the texts it was asked to embed."""

    def __init__(self, dimensions: int = 32) -> None:
        super().__init__(dimensions)
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return super().embed_documents(texts)


NOTES = {
    "memory/2024-01-02.md": "# Tuesday\n\nWe deployed the python service.\n\n- tea with Ana\n",
    "memory/2024-01-03.md": "# Wednesday\n\nThe database migration failed twice.\n",
    "MEMORY.md": "# Facts\n\n- Ana prefers green tea\n- the deploy key rotates monthly\n",
}


def _workspace(root: Path, notes: dict[str, str] = NOTES) -> list[SourceFile]:
    for rel, text in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return _files(root)


def _files(root: Path) -> list[SourceFile]:
    return [
        SourceFile("global", p.relative_to(root).as_posix(), p) for p in sorted(root.rglob("*.md"))
    ]


def _paths(store: Any, ids: Sequence[int]) -> list[str]:
    units = store.get_units(ids)
    return [units[i].path for i in ids]


def test_keyword_search_scores_are_non_negative_and_filtered(
    open_store: OpenStore, tmp_path: Path
) -> None:
    store = open_store()
    sync_files(store, None, _workspace(tmp_path / "ws"), sources=["global"])
    hits = keyword_hits(store, "tea deployed", ["global"], "block", 10)
    assert hits
    assert all(h.score >= 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    units = store.get_units(h.unit_id for h in hits)
    assert {u.kind for u in units.values()} == {"block"}
    assert any("tea with Ana" in u.text for u in units.values())
    assert keyword_hits(store, "tea", ["agent:other"], "block", 10) == []
    assert keyword_hits(store, "tea", [], "block", 10) == []
    assert keyword_hits(store, "zebra", ["global"], "chunk", 10) == []


def test_keyword_search_prefers_the_unit_matching_more_terms(
    open_store: OpenStore, tmp_path: Path
) -> None:
    store = open_store()
    sync_files(store, None, _workspace(tmp_path / "ws"), sources=["global"])
    hits = keyword_hits(store, "green tea", ["global"], "block", 10)
    assert "green tea" in store.get_units([hits[0].unit_id])[hits[0].unit_id].text


def _random_units(store: Any, seed: int = 11) -> None:
    """Units of both kinds in two sources; a third of the texts repeat (scores tie)."""
    rng = random.Random(seed)
    words = [f"w{n}" for n in range(30)] + ["tea", "green", "deploy", "python"]
    writes = []
    for number in range(24):
        source, path = ("global" if number % 3 else "agent:a"), f"memory/f{number}.md"
        texts = [" ".join(rng.choices(words, k=rng.randint(2, 14))) for _ in range(9)]
        texts += texts[:4]
        units = [
            Unit(source, path, "chunk" if i % 4 == 0 else "block", i + 1, i + 1, text)
            for i, text in enumerate(texts)
        ]
        writes.append(FileWrite(FileStamp(source, path, f"{number:064}", 1, 1), units))
    store.write_files(writes)


KIND_QUERIES = [
    "tea green",
    "w1 w2 w3 deploy python",
    "green tea tea",
    "w7",
    "zebra tea",
    "zebra",
]


def test_keyword_search_kinds_equals_one_kind_at_a_time(open_store: OpenStore) -> None:
    """One keyword pass for both unit kinds ranks each kind as a query for it alone.

    Higher score first, ties by lower unit id, each unit of the kind it is listed under.
    """
    store = open_store()
    _random_units(store)
    both: tuple[UnitKind, ...] = ("block", "chunk")
    for text in KIND_QUERIES:
        for sources in (["global"], ["agent:a"], ["global", "agent:a"]):
            everything = {k: keyword_hits(store, text, sources, k, 1_000) for k in both}
            for limit in (1, 5, 40):
                found = store.keyword_search(words(text), sources, both, limit)
                assert list(found) == list(both)
                for kind in both:
                    assert found[kind] == keyword_hits(store, text, sources, kind, limit)
                    assert found[kind] == everything[kind][:limit]
                    order = [(-h.score, h.unit_id) for h in everything[kind]]
                    assert order == sorted(order)
                    units = store.get_units(h.unit_id for h in everything[kind])
                    assert {(u.kind, u.source in sources) for u in units.values()} <= {(kind, True)}
    tea = words("tea")
    assert store.keyword_search(tea, [], both, 5) == {"block": [], "chunk": []}
    assert store.keyword_search(tea, ["global"], (), 5) == {}
    assert list(store.keyword_search(tea, ["global"], ("chunk", "chunk"), 5)) == ["chunk"]
    assert store.keyword_search(KeywordQuery(()), ["global"], both, 5) == {"block": [], "chunk": []}


def test_query_syntax_in_a_term_is_searched_as_words(open_store: OpenStore, tmp_path: Path) -> None:
    """A query has no syntax: quotes, stars, carets and brackets in a term never break it."""
    store = open_store()
    sync_files(store, None, _workspace(tmp_path / "ws"), sources=["global"])
    plain = keyword_hits(store, "tea", ["global"], "block", 10)
    assert plain
    for term in ('"tea', 'tea"', "tea*", "^tea", "(tea", "tea)"):
        found = store.keyword_search(KeywordQuery((term,)), ["global"], ("block",), 10)
        assert found["block"] == plain, term


def test_vector_search_returns_cosine_best_first(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store()
    embedder = HashEmbedder(32)
    sync_files(store, embedder, _workspace(tmp_path / "ws"), sources=["global"])
    query = embedder.embed_query("The database migration failed twice.")
    hits = store.vector_search(query, ["global"], "block", 5)
    assert all(-1.0001 <= h.score <= 1.0001 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    best = store.get_units([hits[0].unit_id])[hits[0].unit_id]
    assert best.text == "The database migration failed twice."
    vectors = store.get_vectors(h.unit_id for h in hits)
    for hit in hits:  # the score is the cosine of the query and the stored vector
        stored = vectors[hit.unit_id]
        cosine = float(stored @ query / (np.linalg.norm(stored) * np.linalg.norm(query)))
        assert hit.score == pytest.approx(cosine, abs=1e-4)


def test_units_round_trip_with_lines_headings_and_mtime(
    open_store: OpenStore, tmp_path: Path
) -> None:
    store = open_store()
    stamp = FileStamp("global", "a.md", "h" * 64, 10, 1_700_000_000_123_456_789)
    unit = Unit("global", "a.md", "block", 3, 4, "text\nwith ünïcode", ("Top", "Sub"), "s1")
    assert store.write_files([FileWrite(stamp, [unit])]) == 1
    hits = keyword_hits(store, "unicode text", ["global"], "block", 5)
    got = store.get_units([hits[0].unit_id])[hits[0].unit_id]
    assert (got.start_line, got.end_line, got.heading_path) == (3, 4, ("Top", "Sub"))
    assert got.text == "text\nwith ünïcode"
    assert got.file_mtime == pytest.approx(1_700_000_000.123456789)
    assert store.file_stamps(["global"]) == {("global", "a.md"): stamp}
    assert store.count_files(["global"]) == 1
    assert store.get_units([999_999]) == {}


def test_sync_add_change_rename_delete_and_unchanged(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store()
    root = tmp_path / "ws"
    embedder = CountingEmbedder()
    first = sync_files(store, embedder, _workspace(root), sources=["global"])
    assert (first.added, first.embedded) == (3, len(embedder.texts))
    embedder.texts.clear()

    again = sync_files(store, embedder, _files(root), sources=["global"])
    assert (again.unchanged, again.embedded, embedder.texts) == (3, 0, [])

    (root / "memory/2024-01-03.md").write_text("# Wednesday\n\nThe migration worked.\n")
    (root / "MEMORY.md").rename(root / "FACTS.md")
    (root / "memory/2024-01-02.md").unlink()
    report = sync_files(store, embedder, _files(root), sources=["global"])
    assert (report.changed, report.renamed, report.deleted) == (1, 1, 1)
    assert all("green tea" not in t for t in embedder.texts)  # the rename re-embedded nothing
    stamps = store.file_stamps(["global"])
    assert set(stamps) == {("global", "FACTS.md"), ("global", "memory/2024-01-03.md")}
    hits = keyword_hits(store, "green", ["global"], "block", 5)
    assert _paths(store, [h.unit_id for h in hits]) == ["FACTS.md"]
    assert keyword_hits(store, "python", ["global"], "chunk", 5) == []
    assert keyword_hits(store, "failed", ["global"], "chunk", 5) == []
    stats = store.stats()
    assert stats.vectors == stats.chunks + stats.blocks
    assert stats.files == 2


def test_search_facade_runs_on_the_store(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store()
    embedder = HashEmbedder(32)
    sync_files(store, embedder, _workspace(tmp_path / "ws"), sources=["global"])
    results = search(
        store, embedder, "when did the migration fail?", sources=["global"], options=SearchOptions()
    )
    assert results.hits
    assert results.hits[0].path == "memory/2024-01-03.md"
    keyword_only = search(
        store, None, "green tea", sources=["global"], options=SearchOptions(max_results=3)
    )
    assert keyword_only.hits[0].path == "MEMORY.md"


def test_identity_mismatch_is_a_clear_error(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store()
    files = _workspace(tmp_path / "ws")
    sync_files(store, HashEmbedder(32), files, sources=["global"])
    with pytest.raises(IndexMismatchError, match="index rebuild"):
        sync_files(store, HashEmbedder(16), files, sources=["global"])
    with pytest.raises(IndexMismatchError, match="16 dimensions"):
        store.vector_search(HashEmbedder(16).embed_query("tea"), ["global"], "block", 3)
    other = EmbedderIdentity("hash", "other", 32)
    reopened = open_store(identity=other)
    with pytest.raises(IndexMismatchError, match="other"):
        reopened.vector_search(HashEmbedder(32).embed_query("tea"), ["global"], "block", 3)


def test_keyword_only_index_gains_vectors_later(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store()
    files = _workspace(tmp_path / "ws")
    sync_files(store, None, files, sources=["global"])
    assert store.identity is None
    assert store.vector_search(np.ones(32, dtype=np.float32), ["global"], "chunk", 5) == []
    assert store.stats().vectors == 0
    embedder = CountingEmbedder()
    report = sync_files(store, embedder, files, sources=["global"])
    assert report.embedded > 0
    assert store.files_missing_vectors(["global"]) == set()
    stats = store.stats()
    assert stats.identity == EmbedderIdentity("hash", "hash-32", 32)
    assert stats.vectors == stats.chunks + stats.blocks


def test_rebuild_reuses_the_embedding_cache(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store()
    files = _workspace(tmp_path / "ws")
    embedder = CountingEmbedder()
    sync_files(store, embedder, files, sources=["global"])
    report = rebuild_index(store, embedder, files, sources=["global"])
    assert (report.embedded, report.added) == (0, 3)
    assert report.cache_hits == store.stats().chunks + store.stats().blocks
    cached = store.cached_vectors(EmbedderIdentity("hash", "hash-32", 32), ["nope"])
    assert cached == {}


def test_trigram_tokenizer_finds_cjk_substrings(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store(tokenizer="trigram")
    notes = {"memory/jp.md": "# 日記\n\n東京都に住んでいます。\n\n- 京都へ行きました\n"}
    sync_files(store, None, _workspace(tmp_path / "ws", notes), sources=["global"])
    hits = keyword_hits(store, "東京都", ["global"], "block", 5)
    texts = [u.text for u in store.get_units(h.unit_id for h in hits).values()]
    assert texts == ["東京都に住んでいます。"]
    both = keyword_hits(store, "京都へ 住んで", ["global"], "block", 5)
    assert len(both) == 2
    assert keyword_hits(store, "京", ["global"], "block", 5) == []
    assert store.tokenizer == "trigram"


def test_tokenizer_mismatch_and_switch_by_clear(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store()
    files = _workspace(tmp_path / "ws")
    sync_files(store, None, files, sources=["global"])
    with pytest.raises(IndexMismatchError, match="porter"):
        open_store(tokenizer="trigram")
    same = open_store(tokenizer=None)
    rebuild_index(same, None, files, sources=["global"], tokenizer="trigram")
    assert open_store(tokenizer="trigram").tokenizer == "trigram"
    assert keyword_hits(same, "migration", ["global"], "block", 5)


def test_other_sources_are_untouched_by_a_sync(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store()
    sync_files(store, None, _workspace(tmp_path / "g"), sources=["global"])
    agent = tmp_path / "a"
    (agent / "memory").mkdir(parents=True)
    (agent / "memory/x.md").write_text("# agent\n\nagent tea notes\n")
    files = [SourceFile("agent:bob", "memory/x.md", agent / "memory/x.md")]
    sync_files(store, None, files, sources=["agent:bob"])
    assert store.count_files(["global"]) == 3
    assert store.count_files(["agent:bob"]) == 1
    assert store.count_files(["global", "agent:bob"]) == 4
    sync_files(store, None, [], sources=["agent:bob"])
    assert store.count_files(["global"]) == 3
    assert store.count_files(["agent:bob"]) == 0


def test_stat_only_change_is_restamped_not_rewritten(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store()
    root = tmp_path / "ws"
    sync_files(store, None, _workspace(root), sources=["global"])
    path = root / "MEMORY.md"
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = keyword_hits(store, "green", ["global"], "block", 5)
    report = sync_files(store, None, _files(root), sources=["global"])
    assert (report.unchanged, report.changed) == (3, 0)
    assert store.file_stamps(["global"])[("global", "MEMORY.md")].mtime_ns == (
        1_600_000_000_000_000_000
    )
    assert keyword_hits(store, "green", ["global"], "block", 5) == before
