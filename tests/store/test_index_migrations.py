"""The numbered migrations of the index, on indexes as earlier versions of memdir left them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from store_support import fts5_ranking, index_at_m002

from keyword_support import words
from memdir.errors import StoreError
from memdir.store import EmbedderIdentity, SqliteStore
from memdir.store.sqlite.migrations import MIGRATIONS

sqlite3 = pytest.importorskip("sqlean")  # the store's driver (sqlite-vec loads into it)
IDENTITY = EmbedderIdentity("hash", "hash-8", 8)
TEXTS = ["green tea in the garden", "the deploy key rotates", "tea again", "no vector here"]

OLD_FTS = [
    """CREATE VIRTUAL TABLE units_fts USING fts5(text, heading_path, content='units',
        content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER units_fts_insert AFTER INSERT ON units BEGIN
        INSERT INTO units_fts (rowid, text, heading_path)
        VALUES (new.id, new.text, new.heading_path); END""",
    """CREATE TRIGGER units_fts_delete AFTER DELETE ON units BEGIN
        INSERT INTO units_fts (units_fts, rowid, text, heading_path)
        VALUES ('delete', old.id, old.text, old.heading_path); END""",
]


def applied(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    names = [row[0] for row in conn.execute("SELECT name FROM migrations ORDER BY id")]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    return [*names, *(f"table:{t}" for t in sorted(tables))]


def vector_of(n: int) -> np.ndarray:
    return np.random.default_rng(n).standard_normal(8).astype(np.float32)


def old_index(path: Path, vec0: bool = False) -> dict[str, np.ndarray]:
    """An index as the previous version wrote it: m001 and m002 recorded; an FTS5 table,
    kept terms, two change logs and the vectors in ``unit_vectors`` (or a sqlite-vec
    table) beside a WITHOUT ROWID embedding cache. Unit 3's vector is not in the cache
    (its text had no hash); unit 4 has none (written keyword-only). Returns each unit's
    text -> vector."""
    conn = index_at_m002(path, vec0=vec0)
    for statement in OLD_FTS:
        conn.execute(statement)
    conn.execute("CREATE TABLE term_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, file_id INTEGER)")
    conn.execute("CREATE TABLE vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, unit_id INTEGER)")
    meta = {
        "tokenizer": "porter", "identity_provider": "hash", "identity_model": "hash-8",
        "identity_dimensions": "8", "vector_backend": "sqlite-vec" if vec0 else "numpy",
        "vector_epoch": "e", "term_epoch": "t", "vector_graph:block": '{"file": "x"}',
    }  # fmt: skip
    conn.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
    if vec0:
        conn.execute(
            "CREATE VIRTUAL TABLE unit_vec USING vec0(unit_id INTEGER PRIMARY KEY, "
            "kind TEXT PARTITION KEY, source TEXT, embedding FLOAT[8] distance_metric=cosine)"
        )
    conn.execute("INSERT INTO files VALUES (1, 'global', 'a.md', 's', 1, 1.0, 1)")
    vectors = {}
    for n, text in enumerate(TEXTS, 1):
        sha = "" if n == 3 else f"sha-{n}"
        conn.execute(
            "INSERT INTO units (file_id, source, path, kind, start_line, end_line, text, sha256) "
            "VALUES (1, 'global', 'a.md', 'block', ?, ?, ?, ?)",
            (n, n, text, sha),
        )
        if n == 4:
            continue
        vectors[text] = vector_of(n)
        table = "unit_vec" if vec0 else "unit_vectors"
        conn.execute(
            f"INSERT INTO {table} (unit_id, kind, source, embedding) "
            "VALUES (?, 'block', 'global', ?)",
            (n, vectors[text].tobytes()),
        )
        if sha:
            conn.execute(
                "INSERT INTO embedding_cache VALUES ('hash', 'hash-8', ?, 8, ?)",
                (sha, vectors[text].tobytes()),
            )
    conn.execute(
        "INSERT INTO embedding_cache VALUES ('hash', 'hash-8', 'sha-gone', 8, ?)",
        (vector_of(9).tobytes(),),
    )
    conn.execute("COMMIT")
    conn.close()
    return vectors


def test_a_new_index_has_every_migration_in_order(tmp_path: Path) -> None:
    SqliteStore.open(tmp_path / "i.db").close()
    assert applied(tmp_path / "i.db")[: len(MIGRATIONS)] == [m.name for m in MIGRATIONS]


def test_an_index_of_the_previous_version_keeps_its_vectors_and_gains_its_terms(
    tmp_path: Path,
) -> None:
    path = tmp_path / "i.db"
    vectors = old_index(path)
    with SqliteStore.open(path) as store:
        units = store.get_units(range(1, 5))
        stored = store.get_vectors(units)
        assert {units[u].text: v.tobytes() for u, v in stored.items()} == {
            text: vector.tobytes() for text, vector in vectors.items()
        }
        query = vector_of(2)
        [best] = store.vector_search(query, ["global"], "block", 1)
        assert units[best.unit_id].text == TEXTS[1]
        assert best.score == pytest.approx(1.0)
        cached = store.cached_vectors(IDENTITY, ["sha-1", "sha-2", "sha-gone"])
        assert set(cached) == {"sha-1", "sha-2", "sha-gone"}
        stats = store.stats()
        assert (stats.vectors, stats.cached_embeddings) == (3, 3)
        assert store.files_missing_vectors(["global"]) == {("global", "a.md")}
        found = store.keyword_search(words("tea deploy"), ["global"], ("block",), 5)["block"]
        assert [(h.unit_id, h.score) for h in found] == fts5_ranking(
            path, ["tea", "deploy"], ["global"], "block", 5
        )
        assert stats.extra["vector_graphs"] == {}  # the old tag is gone: rebuilt by a sync
    names = applied(path)
    assert names[: len(MIGRATIONS)] == [m.name for m in MIGRATIONS]
    for gone in ("units_fts", "unit_vectors", "embedding_cache", "term_log", "vector_log"):
        assert f"table:{gone}" not in names
    assert "table:file_terms" in names


def test_a_sqlite_vec_index_takes_its_vectors_from_the_cache(tmp_path: Path) -> None:
    """Without the extension its table cannot be read: units get the cached vector of
    their text, and the one whose vector was not cached is left for the next sync."""
    path = tmp_path / "i.db"
    vectors = old_index(path, vec0=True)
    with SqliteStore.open(path) as store:
        units = store.get_units(range(1, 5))
        stored = store.get_vectors(units)
        assert {units[u].text for u in stored} == {TEXTS[0], TEXTS[1]}
        for unit_id, vector in stored.items():
            assert vector.tobytes() == vectors[units[unit_id].text].tobytes()
        assert store.files_missing_vectors(["global"]) == {("global", "a.md")}
    names = applied(path)
    assert not [n for n in names if n.startswith("table:unit_vec")]


def test_a_migration_from_a_newer_memdir_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    SqliteStore.open(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO migrations (name, applied_at) VALUES ('m999_x', 'x')")
    conn.close()
    with pytest.raises(StoreError, match="memdir index rebuild"):
        SqliteStore.open(path)
