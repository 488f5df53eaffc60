"""The in-memory BM25 ranking (``memdir.store.keywords``) gives FTS5's lists.

Every check opens the same database twice: ``keyword_ranking="memory"`` (the default)
and ``"fts5"`` (FTS5's ``bm25()``, pruned; itself checked against the unpruned
ranking in ``test_keyword_fast.py``), and compares ids, order and scores.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_support import unpruned_bm25

from memdir.store import FileStamp, FileWrite, SqliteStore, Unit
from memdir.store.base import UnitKind
from memdir.store.keywords import KeywordIndex, best_first
from memdir.store.terms import term_hash

WORDS = [
    "run", "running", "runs", "ran", "runner", "plan", "planning", "planned", "garden",
    "gardens", "tea", "teas", "coffee", "Café", "cafe", "naïve", "naive", "meeting",
    "meetings", "database", "databases", "billing", "deploy", "deployed", "deploying",
    "the", "a", "of", "and", "42", "2024", "x",
]  # fmt: skip
BOTH: tuple[UnitKind, ...] = ("block", "chunk")


def _text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 25))]
    return " ".join(words) + rng.choice(["", ".", "!", " - done", ", really?"])


def _write(store: SqliteStore, name: str, texts: list[str], source: str = "global") -> None:
    units = [
        Unit(source, name, "chunk" if i % 5 == 4 else "block", i + 1, i + 1, text, ("Notes",))
        for i, text in enumerate(texts)
    ]
    store.write_files([FileWrite(FileStamp(source, name, str(hash(tuple(texts))), 1, 1), units)])


def _expression(rng: random.Random) -> str:
    words = rng.sample(WORDS, rng.randint(1, 6))
    if rng.random() < 0.2:
        words.append(words[0])  # a repeated phrase counts twice, in FTS5 as here
    return " OR ".join(f'"{w}"' for w in words)


def assert_same(memory: SqliteStore, fts5: SqliteStore, expression: str, limit: int) -> None:
    for sources in (["global"], ["global", "agent:a"], ["agent:a"]):
        got = memory.keyword_search_kinds(expression, sources, BOTH, limit)
        want = fts5.keyword_search_kinds(expression, sources, BOTH, limit)
        for kind in BOTH:
            assert [h.unit_id for h in got[kind]] == [h.unit_id for h in want[kind]], (
                expression,
                sources,
                kind,
            )
            assert [h.score for h in got[kind]] == [h.score for h in want[kind]]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[SqliteStore, SqliteStore]]:
    path = tmp_path / "i.db"
    with SqliteStore.open(path) as memory, SqliteStore.open(path, keyword_ranking="fts5") as fts5:
        yield memory, fts5


def test_random_corpora_rank_as_fts5_does(pair: tuple[SqliteStore, SqliteStore]) -> None:
    memory, fts5 = pair
    rng = random.Random(11)
    for n in range(60):
        source = "agent:a" if n % 3 == 0 else "global"
        _write(memory, f"f{n}.md", [_text(rng) for _ in range(rng.randint(0, 30))], source)
    for _ in range(120):
        assert_same(memory, fts5, _expression(rng), rng.choice([1, 3, 10, 50, 400]))
    assert memory._keywords.rows == sum(1 for _ in _unit_ids(memory.path))


def test_skewed_corpora_rank_as_unpruned_fts5_does(tmp_path: Path) -> None:
    """A few words in most units, most words rare, dead units, a source filter: the
    lists equal FTS5's own ``bm25()`` ranking of every matching row, bit for bit.

    The reference is the unpruned query, not ``keyword_ranking="fts5"``: on such data
    that path's region expressions can sum a unit's phrases in another order than the
    query's, one ulp away from FTS5's full ranking (seen here with this seed).
    """
    rng = random.Random(3)
    common = ["team", "update", "status", "owner", "fix"]
    rare = [f"w{n}" for n in range(300)]

    def text() -> str:
        words = [w for w in common if rng.random() < 0.7]
        words += [rng.choice(rare[: rng.randint(1, 300)]) for _ in range(rng.randint(0, 4))]
        return " ".join(words or ["status"])

    path = tmp_path / "i.db"
    with SqliteStore.open(path) as memory:
        for n in range(40):
            _write(
                memory, f"f{n}.md", [text() for _ in range(50)], "agent:a" if n % 4 else "global"
            )
        memory.delete_files([("global", "f0.md")])
        _write(memory, "f4.md", [text() for _ in range(50)])
        for _ in range(60):
            words = rng.sample(common, rng.randint(1, 4)) + rng.sample(rare, rng.randint(1, 2))
            expression = " OR ".join(f'"{w}"' for w in rng.sample(words, len(words)))
            limit = rng.choice([1, 5, 20])
            for sources in (["global"], ["global", "agent:a"], ["agent:a"]):
                got = memory.keyword_search_kinds(expression, sources, BOTH, limit)
                for kind in BOTH:
                    want = [
                        (uid, max(0.0, score))  # the store clamps -bm25() at 0
                        for uid, score in unpruned_bm25(path, expression, sources, kind, limit)
                    ]
                    assert [(h.unit_id, h.score) for h in got[kind]] == want, (expression, kind)


def test_rewrites_and_deletes_are_followed_in_place(pair: tuple[SqliteStore, SqliteStore]) -> None:
    memory, fts5 = pair
    rng = random.Random(5)
    for n in range(20):
        _write(memory, f"f{n}.md", [_text(rng) for _ in range(10)])
    assert_same(memory, fts5, '"tea" OR "running"', 20)
    for step in range(30):
        name = f"f{rng.randrange(25)}.md"
        if step % 4 == 3:
            memory.delete_files([("global", name)])
        else:
            _write(memory, name, [_text(rng) for _ in range(rng.randint(1, 12))])
        assert_same(memory, fts5, _expression(rng), 15)
    stats = memory.stats().extra
    assert stats["keyword_full_loads"] == 1, "a small write reloaded every term"
    assert int(stats["keyword_memory_bytes"]) > 0  # type: ignore[call-overload]
    assert len(memory._keywords.segments) <= 6


def test_writes_of_another_process_are_ranked(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    writer = (
        "import sys\n"
        "from memdir.store import FileStamp, FileWrite, SqliteStore, Unit\n"
        "with SqliteStore.open(sys.argv[1]) as store:\n"
        "    units = [Unit('global', sys.argv[2], 'block', 1, 1, sys.argv[3])]\n"
        "    store.write_files([FileWrite(FileStamp('global', sys.argv[2], sys.argv[3], 1, 1),"
        " units)])\n"
    )
    with SqliteStore.open(path) as memory, SqliteStore.open(path, keyword_ranking="fts5") as fts5:
        _write(memory, "a.md", ["tea in the garden", "coffee at noon"])
        assert_same(memory, fts5, '"tea" OR "coffee"', 10)
        for name, text in (("b.md", "green tea and more tea"), ("a.md", "coffee only")):
            done = subprocess.run(
                [sys.executable, "-c", writer, str(path), name, text],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 0, done.stderr
        found = memory.keyword_search_kinds('"tea" OR "coffee"', ["global"], BOTH, 10)
        texts = [u.text for u in memory.get_units(h.unit_id for h in found["block"]).values()]
        assert sorted(texts) == ["coffee only", "green tea and more tea"]
        assert_same(memory, fts5, '"tea" OR "coffee"', 10)


def test_phrases_of_several_terms_and_other_expressions_go_to_fts5(
    pair: tuple[SqliteStore, SqliteStore],
) -> None:
    memory, fts5 = pair
    _write(memory, "a.md", ["the e-mail server", "mail e then", "e mail", "foo_bar baz"])
    for expression in ('"e-mail" OR "server"', '"foo_bar"', '"e" AND "mail"', "mail", '"a b"'):
        assert_same(memory, fts5, expression, 10)
    found = memory.keyword_search_kinds('"e-mail"', ["global"], BOTH, 10)
    hits = found["block"] + found["chunk"]
    texts = {u.text for u in memory.get_units(h.unit_id for h in hits).values()}
    assert texts == {"the e-mail server", "e mail"}  # a phrase: "mail e" does not match


def test_an_index_without_terms_gains_them_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memdir.store.sqlite.BACKFILL_FILES", 3)  # three batches, then done
    path = tmp_path / "i.db"
    rng = random.Random(2)
    with SqliteStore.open(path) as store:
        for n in range(8):
            _write(store, f"f{n}.md", [_text(rng) for _ in range(6)])
    conn = sqlite3.connect(path)  # what an index of an earlier memdir looks like
    conn.execute("DROP TABLE file_terms")
    conn.execute("DROP TABLE term_log")
    conn.commit()
    conn.close()
    with SqliteStore.open(path) as memory, SqliteStore.open(path, keyword_ranking="fts5") as fts5:
        assert_same(memory, fts5, '"tea" OR "plan" OR "deploy"', 20)
        assert memory._keywords.rows == 48
        assert "terms_pending" not in memory._meta()


def test_an_interrupted_backfill_resumes_on_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    rng = random.Random(4)
    with SqliteStore.open(path) as store:
        for n in range(6):
            _write(store, f"f{n}.md", [_text(rng) for _ in range(5)])
    conn = sqlite3.connect(path)  # killed after the first batches of a backfill
    conn.execute("DELETE FROM file_terms WHERE file_id IN (SELECT id FROM files LIMIT 4)")
    conn.execute("INSERT INTO meta (key, value) VALUES ('terms_pending', '1')")
    conn.commit()
    with SqliteStore.open(path) as memory, SqliteStore.open(path, keyword_ranking="fts5") as fts5:
        assert conn.execute("SELECT count(*) FROM file_terms").fetchone()[0] == 6
        assert "terms_pending" not in memory._meta()
        assert_same(memory, fts5, '"tea" OR "garden" OR "run"', 30)
    conn.close()


def test_units_written_without_terms_fall_back_to_fts5(
    pair: tuple[SqliteStore, SqliteStore], caplog: pytest.LogCaptureFixture
) -> None:
    memory, fts5 = pair
    _write(memory, "a.md", ["tea time", "more tea"])
    _write(memory, "b.md", ["tea again"])
    assert_same(memory, fts5, '"tea"', 10)
    conn = sqlite3.connect(memory.path)  # a writer that keeps no terms
    conn.execute("DELETE FROM file_terms WHERE file_id = (SELECT id FROM files WHERE path='b.md')")
    conn.execute("INSERT INTO term_log (file_id) SELECT id FROM files WHERE path = 'b.md'")
    conn.commit()
    conn.close()
    with caplog.at_level(logging.WARNING, logger="memdir.store.keywords"):
        found = memory.keyword_search_kinds('"tea"', ["global"], BOTH, 10)
    assert len(found["block"]) + len(found["chunk"]) == 3, "the unit without terms was lost"
    assert "index rebuild" in caplog.text


def test_trigram_indexes_keep_no_terms_and_search_with_fts5(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db", tokenizer="trigram") as store:
        _write(store, "a.md", ["会議は明日です", "meeting tomorrow"])
        hits = store.keyword_search('"会議は"', ["global"], "block", 5)
        assert len(hits) == 1
        conn = sqlite3.connect(store.path)
        assert conn.execute("SELECT count(*) FROM file_terms").fetchone()[0] == 0
        conn.close()


def test_clear_empties_the_terms(pair: tuple[SqliteStore, SqliteStore]) -> None:
    memory, _ = pair
    _write(memory, "a.md", ["tea time"])
    assert memory.keyword_search('"tea"', ["global"], "block", 5)
    memory.clear()
    assert memory.keyword_search('"tea"', ["global"], "block", 5) == []
    _write(memory, "b.md", ["tea for two"])
    assert len(memory.keyword_search('"tea"', ["global"], "block", 5)) == 1


def test_best_first_breaks_ties_by_lower_id() -> None:
    import numpy as np

    rows = np.array([9, 4, 7, 1, 3], dtype=np.int64)
    scores = np.array([2.0, 1.0, 2.5, 0.5, 2.0])
    assert best_first(rows, scores, 2) == [(7, 2.5), (3, 2.0)]
    assert [r for r, _ in best_first(rows, scores, 10)] == [7, 3, 9, 4, 1]


def test_term_hash_is_stable() -> None:
    # the hashes are stored: they must not change between runs or versions
    assert term_hash("tea") == term_hash("tea") != term_hash("teas")
    assert term_hash("tea") == -8015135494872013382


def test_an_empty_index_answers_empty() -> None:
    index = KeywordIndex()
    assert index.search([term_hash("tea")], ["global"], BOTH, 5) == {"block": [], "chunk": []}


def _unit_ids(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM units")]
    conn.close()
    return ids
