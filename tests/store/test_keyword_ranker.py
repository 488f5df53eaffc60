"""The in-memory BM25 ranking (``KeywordRanker``) gives FTS5's own lists.

Every check compares ids, order and scores, bit for bit, with the oracle of
``store_support.fts5_ranking``: FTS5's ``bm25()`` over a fresh FTS5 table of the same
units, for the OR of the query terms' tokens.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from store_support import fts5_ranking, index_at_m002

from keyword_support import words
from memdir.store import FileStamp, FileWrite, KeywordQuery, SqliteStore, Unit, UnitKind
from memdir.store.sqlite.keywords.ranker import KeywordRanker, Postings, best_first
from memdir.store.sqlite.keywords.terms import FileTerms, term_hash
from memdir.store.sqlite.migrations import MIGRATIONS, advance

WORDS = [
    "run", "running", "runs", "ran", "runner", "plan", "planning", "planned", "garden",
    "gardens", "tea", "teas", "coffee", "Café", "cafe", "naïve", "naive", "meeting",
    "meetings", "database", "databases", "billing", "deploy", "deployed", "deploying",
    "the", "a", "of", "and", "42", "2024", "x", "foo_bar", "e-mail",
]  # fmt: skip
BOTH: tuple[UnitKind, ...] = ("block", "chunk")
SOURCES = (["global"], ["global", "agent:a"], ["agent:a"])


def _text(rng: random.Random) -> str:
    picked = [rng.choice(WORDS) for _ in range(rng.randint(1, 25))]
    return " ".join(picked) + rng.choice(["", ".", "!", " - done", ", really?"])


def _write(store: SqliteStore, name: str, texts: list[str], source: str = "global") -> None:
    units = [
        Unit(source, name, "chunk" if i % 5 == 4 else "block", i + 1, i + 1, text, ("Notes",))
        for i, text in enumerate(texts)
    ]
    store.write_files([FileWrite(FileStamp(source, name, str(hash(tuple(texts))), 1, 1), units)])


def _terms(rng: random.Random) -> list[str]:
    picked = rng.sample(WORDS, rng.randint(1, 6))
    if rng.random() < 0.2:
        picked.append(picked[0])  # a repeated term counts twice, in FTS5 as here
    return picked


def assert_oracle(store: SqliteStore, terms: list[str], limit: int) -> None:
    for sources in SOURCES:
        got = store.keyword_search(KeywordQuery(tuple(terms)), sources, BOTH, limit)
        for kind in BOTH:
            want = fts5_ranking(store.path, terms, sources, kind, limit)
            assert [(h.unit_id, h.score) for h in got[kind]] == want, (terms, sources, kind)


def test_random_corpora_rank_as_fts5_does(tmp_path: Path) -> None:
    rng = random.Random(11)
    with SqliteStore.open(tmp_path / "i.db") as store:
        for n in range(60):
            source = "agent:a" if n % 3 == 0 else "global"
            texts = [_text(rng) for _ in range(rng.randint(0, 30))]
            _write(store, f"f{n}.md", texts + texts[:3], source)  # repeated texts: ties
        for _ in range(120):
            assert_oracle(store, _terms(rng), rng.choice([1, 3, 10, 50, 400]))
        units = store._read(lambda c: c.execute("SELECT count(*) FROM units").fetchone()[0])
        assert store.keywords.rows == units


def test_skewed_corpora_rank_as_fts5_does(tmp_path: Path) -> None:
    """A few words in most units, most words rare, dead units, a source filter."""
    rng = random.Random(3)
    common = ["team", "update", "status", "owner", "fix"]
    rare = [f"w{n}" for n in range(300)]

    def text() -> str:
        picked = [w for w in common if rng.random() < 0.7]
        picked += [rng.choice(rare[: rng.randint(1, 300)]) for _ in range(rng.randint(0, 4))]
        return " ".join(picked or ["status"])

    with SqliteStore.open(tmp_path / "i.db") as store:
        for n in range(40):
            source = "agent:a" if n % 4 else "global"
            _write(store, f"f{n}.md", [text() for _ in range(50)], source)
        store.delete_files([("global", "f0.md")])
        _write(store, "f4.md", [text() for _ in range(50)])
        for _ in range(60):
            terms = rng.sample(common, rng.randint(1, 4)) + rng.sample(rare, rng.randint(1, 2))
            assert_oracle(store, rng.sample(terms, len(terms)), rng.choice([1, 5, 20, 300]))


def test_rewrites_and_deletes_are_followed_in_place(tmp_path: Path) -> None:
    rng = random.Random(5)
    with SqliteStore.open(tmp_path / "i.db") as store:
        for n in range(20):
            _write(store, f"f{n}.md", [_text(rng) for _ in range(10)])
        assert_oracle(store, ["tea", "running"], 20)
        for step in range(30):
            name = f"f{rng.randrange(25)}.md"
            if step % 4 == 3:
                store.delete_files([("global", name)])
            else:
                _write(store, name, [_text(rng) for _ in range(rng.randint(1, 12))])
            assert_oracle(store, _terms(rng), 15)
        stats = store.stats().extra
        assert stats["keyword_full_loads"] == 1, "a small write reloaded every term"
        assert int(stats["keyword_memory_bytes"]) > 0  # type: ignore[call-overload]
        assert len(store.keywords.segments) <= 6


def test_an_appended_line_adds_its_units_and_keeps_the_others(tmp_path: Path) -> None:
    """Re-indexing a note after one appended line keeps the ids (and postings) of the
    units it still has: the ranker takes in the new unit, not the whole note again."""
    lines = [f"- entry {n} about tea and garden {n}" for n in range(50)]
    with SqliteStore.open(tmp_path / "i.db") as store:
        _write(store, "memory/today.md", lines)
        first = store.keyword_search(words("tea"), ["global"], ("block",), 100)["block"]
        _write(store, "memory/today.md", [*lines, "- entry 50 about more tea"])
        again = store.keyword_search(words("tea"), ["global"], ("block",), 100)["block"]
        assert {h.unit_id for h in first} < {h.unit_id for h in again}
        assert len(again) == len(first) + 1
        assert store.keywords.full_loads == 1
        assert_oracle(store, ["tea", "more"], 100)


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
    with SqliteStore.open(path) as store:
        _write(store, "a.md", ["tea in the garden", "coffee at noon"])
        assert_oracle(store, ["tea", "coffee"], 10)
        for name, text in (("b.md", "green tea and more tea"), ("a.md", "coffee only")):
            done = subprocess.run(
                [sys.executable, "-c", writer, str(path), name, text],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 0, done.stderr
        found = store.keyword_search(words("tea coffee"), ["global"], BOTH, 10)
        texts = [u.text for u in store.get_units(h.unit_id for h in found["block"]).values()]
        assert sorted(texts) == ["coffee only", "green tea and more tea"]
        assert_oracle(store, ["tea", "coffee"], 10)


def test_a_term_the_tokenizer_splits_counts_as_each_of_its_tokens(tmp_path: Path) -> None:
    """``foo_bar`` and ``e-mail`` are two tokens each: the query ranks by any of them (the
    in-memory index keeps no positions), with FTS5's scores for that OR."""
    with SqliteStore.open(tmp_path / "i.db") as store:
        _write(store, "a.md", ["the e-mail server", "mail e then", "e mail", "foo_bar baz", "bar"])
        for terms in (["e-mail", "server"], ["foo_bar"], ["e", "mail"], ["a b"]):
            assert_oracle(store, terms, 10)
        found = store.keyword_search(words("foo_bar"), ["global"], BOTH, 10)
        hits = found["block"] + found["chunk"]
        texts = {u.text for u in store.get_units(h.unit_id for h in hits).values()}
        assert texts == {"foo_bar baz", "bar"}


def test_trigram_indexes_rank_in_memory_too(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db", tokenizer="trigram") as store:
        _write(store, "a.md", ["会議は明日です", "meeting tomorrow", "東京都に住んでいます"])
        hits = store.keyword_search(words("会議は"), ["global"], ("block",), 5)["block"]
        assert [u.text for u in store.get_units(h.unit_id for h in hits).values()] == [
            "会議は明日です"
        ]
        for terms in (["会議は"], ["東京都", "meeting"], ["京"], ["tomorrow"]):
            assert_oracle(store, terms, 5)


def test_an_index_without_kept_terms_gains_them_batch_by_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index of an earlier version (migrated to m002, units but no terms) gains them in
    batches; a process killed after a batch leaves the rest to the next open."""
    monkeypatch.setattr("memdir.store.sqlite.migrations.TERMS_BATCH", 3)
    path = tmp_path / "i.db"
    rng = random.Random(2)
    _old_index(path, {f"f{n}.md": [_text(rng) for _ in range(6)] for n in range(8)})
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    assert advance(conn, MIGRATIONS, "migrations", str(path))  # one batch, then "killed"
    conn.execute("COMMIT")
    assert conn.execute("SELECT count(*) FROM file_terms").fetchone()[0] == 3
    names = [row[0] for row in conn.execute("SELECT name FROM migrations ORDER BY id")]
    assert names == [m.name for m in MIGRATIONS[:2]]
    conn.close()
    with SqliteStore.open(path) as store:
        assert_oracle(store, ["tea", "plan", "deploy"], 20)
        assert store.keywords.rows == 48
    conn = sqlite3.connect(path)
    names = [row[0] for row in conn.execute("SELECT name FROM migrations ORDER BY id")]
    assert names == [m.name for m in MIGRATIONS]
    conn.close()


def _old_index(path: Path, notes: dict[str, list[str]]) -> None:
    """An index as an earlier memdir left it: m001 and m002 applied, units, no terms."""
    conn = index_at_m002(path)
    conn.execute("INSERT INTO meta VALUES ('tokenizer', 'porter')")
    for n, (name, texts) in enumerate(notes.items()):
        conn.execute("INSERT INTO files VALUES (?, 'global', ?, 's', 1, 1.0, 1)", (n + 1, name))
        for line, text in enumerate(texts, 1):
            conn.execute(
                "INSERT INTO units (file_id, source, path, kind, start_line, end_line, text) "
                "VALUES (?, 'global', ?, 'block', ?, ?, ?)",
                (n + 1, name, line, line, text),
            )
    conn.execute("COMMIT")
    conn.close()


def test_clear_empties_the_terms(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        _write(store, "a.md", ["tea time"])
        assert store.keyword_search(words("tea"), ["global"], BOTH, 5)["block"]
        store.clear()
        assert store.keyword_search(words("tea"), ["global"], BOTH, 5)["block"] == []
        _write(store, "b.md", ["tea for two"])
        assert len(store.keyword_search(words("tea"), ["global"], BOTH, 5)["block"]) == 1


def test_a_new_index_warns_of_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), SqliteStore.open(tmp_path / "i.db") as store:
        assert store.keyword_search(words("tea"), ["global"], BOTH, 5) == {"block": [], "chunk": []}
    assert caplog.records == []


def test_coverage_is_the_share_of_the_query_idf_a_unit_holds(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db") as store:
        _write(store, "a.md", ["tea garden", "tea", "garden party", "party"])
        ids = sorted(
            h.unit_id for h in store.keyword_search(words("party"), ["global"], BOTH, 9)["block"]
        )
        found = store.keyword_search(words("tea garden"), ["global"], ("block",), 9)["block"]
        shares = store.keyword_coverage(words("tea garden"), [h.unit_id for h in found] + ids)
        both, *_ = (h.unit_id for h in found)
        assert shares[both] == 1.0
        assert 0.0 < min(shares[h.unit_id] for h in found) < 1.0
        assert shares[max(ids)] == 0.0  # "party" alone holds none of the query


def test_best_first_breaks_ties_by_lower_id() -> None:
    rows = np.array([9, 4, 7, 1, 3], dtype=np.int64)
    scores = np.array([2.0, 1.0, 2.5, 0.5, 2.0])
    assert best_first(rows, scores, 2) == [(7, 2.5), (3, 2.0)]
    assert [r for r, _ in best_first(rows, scores, 10)] == [7, 3, 9, 4, 1]


def test_term_hash_is_stable() -> None:
    # the hashes are stored: they must not change between runs or versions
    assert term_hash("tea") == term_hash("tea") != term_hash("teas")
    assert term_hash("tea") == -8015135494872013382


def test_an_empty_ranker_answers_empty() -> None:
    ranker = KeywordRanker()
    assert ranker.search([term_hash("tea")], ["global"], BOTH, 5) == {"block": [], "chunk": []}


def _file_terms(file_id: int) -> FileTerms:
    return FileTerms(
        file_id=file_id,
        units=np.array([2 * file_id, 2 * file_id + 1], dtype=np.int64),
        kinds=np.array([0, 1], dtype=np.int8),
        lengths=np.array([3, 2], dtype=np.int32),
        sizes=np.array([2, 1], dtype=np.int32),
        terms=np.array([50 + file_id, 7, 50 + file_id], dtype=np.int64),
        counts=np.array([1, 2, 3], dtype=np.int32),
    )


def test_postings_gathered_past_their_expected_count_make_the_same_segment() -> None:
    exact, short = Postings(9), Postings(1)
    for file_id in range(3):
        exact.add(_file_terms(file_id))
        short.add(_file_terms(file_id))
    one, other = exact.segment(), short.segment()
    for a, b in zip((one.keys, one.starts, one.docs, one.counts),
                    (other.keys, other.starts, other.docs, other.counts), strict=True):  # fmt: skip
        assert np.array_equal(a, b)
    docs, counts = one.postings(7)
    assert docs.tolist() == [0, 2, 4]
    assert counts.tolist() == [2, 2, 2]
    docs, counts = one.postings(51)
    assert docs.tolist() == [2, 3]
    assert counts.tolist() == [1, 3]
