"""The pruned FTS5 keyword search returns the same top-k as ranking every matching row.

These stores rank with FTS5 (``keyword_ranking="fts5"``); the in-memory ranking is
checked against them in ``test_keyword_memory.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from store_support import unpruned_bm25

from memdir.store import FileStamp, FileWrite, SqliteStore, Unit, fts
from memdir.store.base import UnitKind
from memdir.store.fts import split_phrases, term_bound

COMMON = ["alpha", "beta", "gamma", "delta"]
RARE = ["kiwi", "lime", "fig"]
FILLER = [f"w{n}" for n in range(300)]


def _texts(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = rng.sample(FILLER, rng.randint(2, 12))
        words += [w for w in COMMON if rng.random() < 0.35]
        words += [w for w in RARE if rng.random() < 0.01]
        rng.shuffle(words)
        out.append(" ".join(words))
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteStore]:
    opened = _write_corpus(
        tmp_path_factory.mktemp("kw") / "index.db", _texts(12_000), "f", 20, lambda n, i: i % 4 == 0
    )
    yield opened
    opened.close()


def _write_corpus(
    path: Path, texts: list[str], prefix: str, per_file: int, is_chunk: Callable[[int, int], bool]
) -> SqliteStore:
    """One unit per text, ``per_file`` to a file; every third file in ``agent:a``."""
    opened = SqliteStore.open(path, keyword_ranking="fts5")
    writes = []
    for n in range(0, len(texts), per_file):
        source = "global" if n % (3 * per_file) else "agent:a"
        name = f"{prefix}{n}.md"
        units = [
            Unit(source, name, "chunk" if is_chunk(n, i) else "block", i + 1, i + 1, text)
            for i, text in enumerate(texts[n : n + per_file])
        ]
        writes.append(FileWrite(FileStamp(source, name, str(n), 1, 1), units, None))
    opened.write_files(writes)
    return opened


def _exact(
    store: SqliteStore, expression: str, sources: list[str], kind: str, limit: int
) -> list[float]:
    return [score for _, score in unpruned_bm25(store.path, expression, sources, kind, limit)]


EXPRESSIONS = [
    '"alpha" OR "beta"',
    '"alpha" OR "beta" OR "gamma" OR "delta"',
    '"kiwi" OR "alpha" OR "gamma"',
    '"kiwi" OR "lime" OR "fig" OR "beta"',
    '"gamma" OR "w7" OR "w8" OR "delta"',
]


@pytest.mark.slow
@pytest.mark.parametrize("expression", EXPRESSIONS)
@pytest.mark.parametrize(
    ("kind", "sources"), [("block", ["global", "agent:a"]), ("chunk", ["global"])]
)
def test_top_k_scores_equal_the_full_ranking(
    store: SqliteStore, expression: str, kind: str, sources: list[str]
) -> None:
    for limit in (1, 10, 40):
        got = store.keyword_search(expression, sources, kind, limit)  # type: ignore[arg-type]
        want = _exact(store, expression, sources, kind, limit)
        assert [round(h.score, 9) for h in got] == [round(s, 9) for s in want]


@pytest.mark.slow
def test_pruned_path_runs_and_skips_the_full_query(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    expressions: list[str] = []
    answers: list[object] = []
    real = fts.top_units

    def spy(query: fts.Query, *args: object, **kwargs: object) -> object:
        def recording(
            match: str, kinds: Sequence[UnitKind], count: int
        ) -> dict[UnitKind, fts.Ranked]:
            expressions.append(match)
            return query(match, kinds, count)

        answers.append(real(recording, *args, **kwargs))  # type: ignore[arg-type]
        return answers[-1]

    monkeypatch.setattr("memdir.store.fts.top_units", spy)
    expression = '"alpha" OR "beta" OR "gamma" OR "delta"'
    found = store.keyword_search_kinds(expression, ["global", "agent:a"], ("block", "chunk"), 10)
    assert [len(found[kind]) for kind in ("block", "chunk")] == [10, 10]
    assert len(answers) == 1, "the pruned search did not run once for both kinds"
    assert None not in answers[0].values(), "the pruned search did not prove its answer"  # type: ignore[attr-defined]
    assert all(" AND " in e for e in expressions)  # every region narrows the match


def record_matches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every MATCH expression the keyword search runs from now on, in order."""
    expressions: list[str] = []
    real = fts.top_per_kind

    def recording(*args: object) -> dict[UnitKind, fts.Ranked]:
        expressions.append(str(args[1]))
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr("memdir.store.fts.top_per_kind", recording)
    return expressions


@pytest.mark.slow
def test_ceilings_skip_regions_the_bounds_cannot(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four common terms: the first region's 10th scores beat every later region's ceiling
    sum (not its looser bound sum), so that region alone answers, and exactly."""
    expressions = record_matches(monkeypatch)
    expression, sources = '"alpha" OR "beta" OR "gamma" OR "delta"', ["global", "agent:a"]
    found = store.keyword_search_kinds(expression, sources, ("block", "chunk"), 10)
    assert len(expressions) == 1, expressions
    assert " AND " in expressions[0]
    for kind in ("block", "chunk"):
        got = [(h.unit_id, round(h.score, 9)) for h in found[kind]]  # type: ignore[index]
        want = unpruned_bm25(store.path, expression, sources, kind, 10)
        assert got == [(uid, round(s, 9)) for uid, s in want]


def test_region_reach_takes_the_lower_of_bound_and_ceiling() -> None:
    ceilings = {'"a"': 1.0, '"b"': 5.0}
    reach = fts.region_reach(['"a"', '"b"'], [2.0, 3.0], ceilings.__getitem__)
    assert reach == pytest.approx(4.0)
    assert reach >= 4.0  # rounding slack only ever widens the reach


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["store", "tiled"])
def test_random_expressions_equal_the_full_ranking(
    corpus: str, request: pytest.FixtureRequest
) -> None:
    """Random ORs of common, rare and filler terms: ids and scores of every kind's top-k
    equal ranking every matching row, whichever regions the pruning picks."""
    store: SqliteStore = request.getfixturevalue(corpus)
    rng = random.Random(17)
    for _ in range(30):
        terms = rng.sample(COMMON, rng.randint(1, 4)) + rng.sample(RARE + FILLER, rng.randint(0, 3))
        rng.shuffle(terms)
        expression = " OR ".join(f'"{t}"' for t in terms)
        sources = rng.choice([["global", "agent:a"], ["agent:a"], ["global"]])
        limit = rng.choice([1, 5, 40, 300])
        found = store.keyword_search_kinds(expression, sources, ("block", "chunk"), limit)
        for kind in ("block", "chunk"):
            got = [(h.unit_id, round(h.score, 9)) for h in found[kind]]  # type: ignore[index]
            want = unpruned_bm25(store.path, expression, sources, kind, limit)
            assert got == [(uid, round(max(0.0, s), 9)) for uid, s in want], expression


def test_writes_refresh_the_cached_frequencies(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db", keyword_ranking="fts5") as store:
        texts = [f"common word{n} " + ("rare" if n == 5 else "") for n in range(4_500)]
        units = [Unit("global", "a.md", "block", i + 1, i + 1, t) for i, t in enumerate(texts)]
        store.write_files([FileWrite(FileStamp("global", "a.md", "1", 1, 1), units, None)])
        expression = '"rare" OR "common"'
        first = store.keyword_search(expression, ["global"], "block", 3)
        assert first[0].score > first[1].score
        more = [Unit("global", "b.md", "block", 1, 1, "rare rare rare")]
        store.write_files([FileWrite(FileStamp("global", "b.md", "2", 1, 1), more, None)])
        second = store.keyword_search(expression, ["global"], "block", 3)
        assert [round(h.score, 9) for h in second] == [
            round(s, 9) for s in _exact(store, expression, ["global"], "block", 3)
        ]
        assert second[0].unit_id != first[0].unit_id


@pytest.mark.parametrize(
    ("expression", "phrases"),
    [
        ('"a" OR "b"', ['"a"', '"b"']),
        ('"say ""hi""" OR "b" OR "a" OR "b"', ['"say ""hi"""', '"b"', '"a"']),
        ('"a"', ['"a"']),
        ('"a" "b"', None),
        ('"a" AND "b"', None),
        ("plain OR words", None),
        ('"a" OR b', None),
        ('text:"a" OR "b"', None),
    ],
)
def test_split_phrases_accepts_only_or_of_quoted_terms(
    expression: str, phrases: list[str] | None
) -> None:
    assert split_phrases(expression) == phrases


def test_term_bound_is_positive_and_falls_with_frequency() -> None:
    assert term_bound(10, 1_000) > term_bound(100, 1_000) > 0
    assert term_bound(900, 1_000) == pytest.approx(2.2e-6)  # FTS5 clamps idf at 1e-6


def test_other_expressions_keep_working(store: SqliteStore) -> None:
    both = ["global", "agent:a"]
    assert store.keyword_search('"kiwi" "alpha"', both, "block", 5) == [
        h for h in store.keyword_search('"kiwi" AND "alpha"', both, "block", 5)
    ]
    assert store.keyword_search("alpha", both, "block", 3)


def _tiled_texts(count: int, distinct: int = 150, seed: int = 5) -> list[str]:
    """Few distinct texts, each repeated many times: scores tie everywhere."""
    base = _texts(distinct, seed)
    rng = random.Random(seed)
    return [rng.choice(base) for _ in range(count)]


@pytest.fixture(scope="module")
def tiled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteStore]:
    path = tmp_path_factory.mktemp("tiled") / "index.db"
    opened = _write_corpus(path, _tiled_texts(9_000), "t", 30, lambda n, i: (n + i) % 5 == 0)
    yield opened
    opened.close()


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["store", "tiled"])
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_one_pass_for_both_kinds_equals_one_kind_at_a_time(
    corpus: str, expression: str, request: pytest.FixtureRequest
) -> None:
    """keyword_search_kinds gives each kind exactly keyword_search's list: ids, order, scores.

    Both also equal the unpruned query (ties by id), on a random corpus and on one whose
    texts repeat (where scores tie).
    """
    store: SqliteStore = request.getfixturevalue(corpus)
    for sources in (["global", "agent:a"], ["agent:a"]):
        for limit in (1, 10, 40, 200):
            found = store.keyword_search_kinds(expression, sources, ("block", "chunk"), limit)
            assert list(found) == ["block", "chunk"]
            for kind in ("block", "chunk"):
                alone = store.keyword_search(expression, sources, kind, limit)  # type: ignore[arg-type]
                assert found[kind] == alone  # type: ignore[index]
                got = [(h.unit_id, round(h.score, 9)) for h in alone]
                want = unpruned_bm25(store.path, expression, sources, kind, limit)
                assert got == [(uid, round(max(0.0, s), 9)) for uid, s in want]


@pytest.mark.slow
def test_lone_rows_of_a_common_term_get_a_region_not_the_full_query(
    tiled: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Too few chunks in the AND regions to beat the terms' ceilings: the rows holding one
    term alone are ranked by ``c NOT (others)`` regions, and the answer stays exact."""
    expressions = record_matches(monkeypatch)
    expression, sources = '"alpha" OR "beta" OR "gamma" OR "delta"', ["agent:a"]
    found = tiled.keyword_search_kinds(expression, sources, ("block", "chunk"), 200)
    assert any(" NOT " in e for e in expressions), expressions
    assert expression not in expressions, "the full query ran"
    for kind in ("block", "chunk"):
        want = unpruned_bm25(tiled.path, expression, sources, kind, 200)
        got = [(h.unit_id, round(h.score, 9)) for h in found[kind]]  # type: ignore[index]
        assert got == [(uid, round(max(0.0, s), 9)) for uid, s in want]


def test_kinds_are_keys_even_without_hits(tmp_path: Path) -> None:
    with SqliteStore.open(tmp_path / "i.db", keyword_ranking="fts5") as store:
        units = [Unit("global", "a.md", "block", 1, 1, "green tea")]
        store.write_files([FileWrite(FileStamp("global", "a.md", "1", 1, 1), units, None)])
        both: tuple[UnitKind, ...] = ("block", "chunk")
        found = store.keyword_search_kinds('"tea"', ["global"], both, 5)
        assert [len(found["block"]), found["chunk"]] == [1, []]
        assert store.keyword_search_kinds('"tea"', [], both, 5) == {"block": [], "chunk": []}
        assert store.keyword_search_kinds('"tea"', ["global"], both, 0) == {
            "block": [],
            "chunk": [],
        }
        assert store.keyword_search_kinds('"tea"', ["global"], (), 5) == {}
        twice = store.keyword_search_kinds('"tea"', ["global"], ("block", "block"), 5)
        assert list(twice) == ["block"]
        assert twice["block"] == found["block"]
