"""Facts through ``FactBook`` on both backends: SQLite and PostgreSQL (``PostgresFactStore``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from pgserver_support import TestServer

from memdir.embeddings.base import Embedder, HashEmbedder
from memdir.errors import IndexMismatchError, InvalidInputError, NotFoundError, StoreError
from memdir.facts import Fact, FactBook
from memdir.store.contracts import EmbedderIdentity, FactStore
from memdir.store.fact_records import FactFilter
from memdir.store.postgres import PostgresStore
from memdir.store.postgres.facts import PostgresFactStore
from memdir.store.sqlite import SqliteFactStore
from memdir.workspace import Workspace

OpenBook = Callable[..., FactBook]


class Clock:
    """Deterministic time: each call is one second later (hours with ``step``)."""

    def __init__(self, step: timedelta = timedelta(seconds=1)) -> None:
        self.current = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
        self.step = step

    def __call__(self) -> datetime:
        self.current += self.step
        return self.current


@pytest.fixture
def open_book(backend: str, request: pytest.FixtureRequest, home: Path) -> Iterator[OpenBook]:
    """``open_book(agent=None, embedder=HashEmbedder(64), clock=None)`` on ``backend``."""
    books: list[FactBook] = []

    def make_store(source: str) -> FactStore:
        if backend == "postgres":
            server: TestServer = request.getfixturevalue("pg_server")
            schema: str = request.getfixturevalue("pg_schema")
            return PostgresFactStore.open(server.dsn, schema=schema, source=source)
        return SqliteFactStore.open(home / "index" / "memdir.db", source=source)

    def make(
        agent: str | None = None,
        embedder: Embedder | None = HashEmbedder(64),  # noqa: B008  (a stateless fake)
        clock: Clock | None = None,
    ) -> FactBook:
        scope = "global" if agent is None else f"agent:{agent}"
        book = FactBook(make_store(scope), embedder, Workspace(home, agent), clock=clock or Clock())
        books.append(book)
        return book

    yield make
    for book in books:
        book.close()


def _texts(book: FactBook, query: str, **kwargs: object) -> list[str]:
    return [r.fact.text for r in book.recall(query, **kwargs)]  # type: ignore[arg-type]


def _comparable(facts: list[Fact]) -> list[Fact]:
    return sorted((replace(f, access_count=0, last_access=None) for f in facts), key=lambda f: f.id)


def test_cat_scenario_supersedes_and_as_of_sees_the_past(open_book: OpenBook) -> None:
    book = open_book()
    first = book.save("My cat's name is Whiskerino")
    assert first.action == "add"
    assert first.fact is not None
    assert _texts(book, "what is my cat called?") == ["My cat's name is Whiskerino"]
    before_change = book.clock()
    second = book.save("My cat is now called Luna")
    assert second.action == "supersede"
    assert second.fact is not None
    assert second.superseded is not None
    assert second.fact.supersedes == first.fact.id
    assert book.get(first.fact.id).valid_to == second.fact.valid_from
    assert _texts(book, "what is my cat called?") == ["My cat is now called Luna"]
    assert _texts(book, "what is my cat called?", as_of=before_change) == [
        "My cat's name is Whiskerino"
    ]
    assert [f.text for f in book.list_facts(include_superseded=True)] == [
        "My cat's name is Whiskerino",
        "My cat is now called Luna",
    ]
    assert [f.text for f in book.list_facts()] == ["My cat is now called Luna"]


def test_recall_breakdown_and_access_statistics(open_book: OpenBook) -> None:
    book = open_book()
    book.save("My cat's name is Whiskerino")
    book.save("I prefer tea over coffee")
    (hit, *_) = book.recall("cat name")
    assert hit.fact.text == "My cat's name is Whiskerino"
    assert (hit.breakdown.keyword_rank, hit.breakdown.vector_rank) == (1, 1)
    assert hit.breakdown.keyword is not None
    assert 0 < hit.breakdown.keyword < 1
    assert hit.breakdown.fused == pytest.approx(1.0)
    assert book.get(hit.fact.id).access_count == 1
    book.recall("cat name")
    fact = book.get(hit.fact.id)
    assert fact.access_count == 2
    assert fact.last_access == book.clock.current  # type: ignore[attr-defined]


def test_forget_by_id_and_by_query_hides_and_audits(open_book: OpenBook) -> None:
    book = open_book()
    tea = book.save("I prefer tea over coffee").fact
    book.save("My sister lives in Toronto")
    assert tea is not None
    gone = book.forget(tea.id, reason="no longer true")
    assert (gone.forgotten, gone.forgotten_reason) == (True, "no longer true")
    assert all(r.fact.id != tea.id for r in book.recall("tea coffee"))
    sister = book.forget(query="where does my sister live", reason="she moved")
    assert sister.text == "My sister lives in Toronto"
    assert book.list_facts() == []
    audit = book.list_facts(include_forgotten=True)
    assert {f.forgotten_reason for f in audit} == {"no longer true", "she moved"}
    assert book.forget(tea.id, reason="again") == book.get(tea.id)
    with pytest.raises(NotFoundError, match="find it with") as missing:
        book.forget("f-aaaaaaaaaa", reason="x")
    assert missing.value.next_step is not None
    assert missing.value.next_step.action == "recall"
    with pytest.raises(InvalidInputError, match="not valid"):
        book.forget("f-nope", reason="x")


def _fill(book: FactBook) -> None:
    """Saves, a supersession, a reinforcement, a forget and a category: every event kind."""
    book.save("My cat's name is Whiskerino")
    book.save("I prefer tea over coffee", importance=4)
    book.save("We decided to use PostgreSQL for the shared index")
    book.save("The tea shop is on Elm Street", category="places")
    book.save("My cat is now called Luna")
    book.save("i prefer tea over coffee!", importance=9)  # reinforce: importance 9
    book.forget(query="tea shop on Elm Street", reason="it closed")
    book.recall("cat")


def test_rebuild_from_the_notes_restores_every_fact(open_book: OpenBook) -> None:
    book = open_book(clock=Clock(step=timedelta(hours=7)))  # several daily notes
    _fill(book)
    before = book.list_facts(include_superseded=True, include_forgotten=True)
    assert len(before) == 5
    assert len(list(book.workspace.memory_dir.glob("*.md"))) >= 2
    report = book.rebuild()
    assert (report.added, report.embedded) == (5, 5)
    after = book.list_facts(include_superseded=True, include_forgotten=True)
    assert _comparable(after) == _comparable(before)
    assert all(f.access_count == 0 for f in after)  # usage statistics are not in the notes
    assert book.store.count_unembedded() == 0
    assert _texts(book, "what is my cat called?")[0] == "My cat is now called Luna"
    assert book.sync().added == 0  # nothing changed since the rebuild


def test_dropping_the_schema_loses_nothing(
    pg_server: TestServer, pg_schema: str, home: Path
) -> None:
    clock = Clock(step=timedelta(hours=5))
    store = PostgresFactStore.open(pg_server.dsn, schema=pg_schema)
    with FactBook(store, HashEmbedder(64), Workspace(home), clock=clock) as book:
        _fill(book)
        before = book.list_facts(include_superseded=True, include_forgotten=True)
    PostgresStore.delete(pg_server.dsn, pg_schema)  # what `memdir index rebuild` does
    fresh = PostgresFactStore.open(pg_server.dsn, schema=pg_schema)
    with FactBook(fresh, HashEmbedder(64), Workspace(home), clock=clock) as book:
        assert book.list_facts(include_forgotten=True, include_superseded=True) == []
        assert book.sync().added == 5
        after = book.list_facts(include_superseded=True, include_forgotten=True)
    assert _comparable(after) == _comparable(before)


def test_both_backends_reach_the_same_state(
    pg_server: TestServer, pg_schema: str, tmp_path: Path
) -> None:
    def run(store: FactStore, home: Path) -> list[tuple[object, ...]]:
        with FactBook(store, HashEmbedder(64), Workspace(home), clock=Clock()) as book:
            _fill(book)
            hits = [(r.fact.text, round(r.score, 6)) for r in book.recall("cat tea")]
            facts = book.list_facts(include_superseded=True, include_forgotten=True)
        rows: list[tuple[object, ...]] = [
            (f.text, f.category, f.importance, f.valid_from, f.valid_to, f.forgotten_reason)
            for f in facts
        ]
        return [*rows, *hits]

    sqlite_home, pg_home = tmp_path / "a", tmp_path / "b"
    on_sqlite = run(SqliteFactStore.open(sqlite_home / "index" / "memdir.db"), sqlite_home)
    on_pg = run(PostgresFactStore.open(pg_server.dsn, schema=pg_schema), pg_home)
    assert on_pg == on_sqlite


def test_scopes_are_separate(open_book: OpenBook) -> None:
    shared = open_book()
    coder = open_book(agent="coder")
    shared.save("The office is in Berlin")
    coder.save("The build uses uv")
    assert [f.text for f in coder.list_facts()] == ["The build uses uv"]
    assert "The build uses uv" not in _texts(shared, "build uv")
    assert _texts(coder, "build uv") == ["The build uses uv"]
    coder.rebuild()
    assert [f.text for f in shared.list_facts()] == ["The office is in Berlin"]
    assert shared.store.identity == EmbedderIdentity("hash", "hash-64", 64)


def test_a_fact_id_from_another_workspace_changes_only_the_writer(open_book: OpenBook) -> None:
    shared = open_book()
    alice = open_book(agent="alice")
    fact = shared.save("The support page is docs.example.org/help").fact
    assert fact is not None
    note = shared.workspace.root / fact.source_path
    copy = alice.workspace.root / "memory" / "2026-01-01.md"
    copy.parent.mkdir(parents=True)
    copy.write_text(note.read_text().replace("docs.example.org/help", "evil.example/login"))
    assert alice.sync().added == 1
    alice.recall("support page")  # records an access in alice's scope only
    got = shared.get(fact.id)
    assert (got.text, got.citation, got.access_count) == (fact.text, fact.citation, 0)
    for book in (shared, open_book()):  # a second store sees the same
        assert _texts(book, "support page") == [fact.text]
        assert "evil" not in book.prompt_block()
    assert alice.get(fact.id).text == "The support page is evil.example/login"
    alice.forget(fact.id, reason="wrong page")
    alice.rebuild()
    assert not shared.get(fact.id).forgotten
    assert shared.store.vector_shas().keys() == {fact.id}


def test_a_failed_transaction_leaves_nothing(open_book: OpenBook) -> None:
    book = open_book()
    book.save("The office is in Berlin")
    before = book.list_facts()
    seen: list[list[Fact]] = []

    def fail_midway() -> None:
        with book.store.transaction():
            book.store.apply(deletes=[f.id for f in before])
            seen.append(book.store.list_facts(FactFilter()))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fail_midway()
    assert seen == [[]]
    assert book.list_facts() == before


def test_keyword_only_then_backfill_and_a_mismatched_embedder(open_book: OpenBook) -> None:
    plain = open_book(embedder=None)
    plain.save("My cat's name is Whiskerino")
    plain.save("My cat is now called Luna")
    assert _texts(plain, "cat called") == ["My cat is now called Luna"]
    assert plain.store.count_unembedded() == 2
    embedded = open_book()
    assert embedded.sync().embedded == 2
    assert embedded.recall("cat called")[0].breakdown.vector is not None
    other = open_book(embedder=HashEmbedder(32))
    with pytest.raises(IndexMismatchError, match="memdir index rebuild"):
        other.recall("cat")


def test_an_edited_note_changes_the_fact_on_sync(open_book: OpenBook) -> None:
    book = open_book()
    fact = book.save("My cat's name is Whiskerino").fact
    assert fact is not None
    note = book.workspace.root / fact.source_path
    note.write_text(note.read_text().replace("Whiskerino", "Tom"))
    report = book.sync()
    assert (report.changed, report.embedded) == (1, 1)
    assert book.get(fact.id).text == "My cat's name is Tom"
    assert _texts(book, "Tom") == ["My cat's name is Tom"]


def test_store_level_upserts_are_idempotent_and_vectors_cascade(
    pg_server: TestServer, pg_schema: str
) -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    fact = Fact("f-abcdefghij", "nul \x00 inside", "fact", 5, now, now, None, None, "m.md", 3)
    with PostgresFactStore.open(pg_server.dsn, schema=pg_schema) as store:
        store.bind_identity(EmbedderIdentity("hash", "h", 3))
        vector = np.array([1.0, 0.0, 0.0], dtype=np.float32)
        for _ in range(2):
            store.apply(upserts=[fact], vectors={fact.id: ("sha", vector)})
        store.record_access([fact.id], now)
        store.apply(upserts=[fact])  # keeps the access statistics
        got = store.get_facts([fact.id])[fact.id]
        assert (got.text, got.recorded_at, got.access_count) == ("nul \ufffd inside", now, 1)
        assert store.vector_search(vector, FactFilter(), 5) == [(fact.id, pytest.approx(1.0))]
        store.apply(deletes=[fact.id])
        assert store.vector_shas() == {}
        with pytest.raises(IndexMismatchError):
            store.bind_identity(EmbedderIdentity("hash", "h", 4))
        store.clear()
        assert store.identity is None  # no facts left in any scope


def test_invalid_scope_and_closed_store_are_clear_errors(
    pg_server: TestServer, pg_schema: str
) -> None:
    with pytest.raises(InvalidInputError, match="source"):
        PostgresFactStore.open(pg_server.dsn, schema=pg_schema, source="agent:../x")
    store = PostgresFactStore(pg_server.dsn, schema=pg_schema)
    with pytest.raises(StoreError, match="not open"):
        store.list_facts(FactFilter())


def test_retired_lines_name_superseded_and_forgotten_facts_of_each_scope(
    open_book: OpenBook,
) -> None:
    shared = open_book()
    coder = open_book(agent="coder")
    old = shared.save("The standup is at 9:30")
    new = shared.save("The standup moved to 10:00")
    gone = coder.save("The build cache lives in /tmp/cache")
    coder.forget(query="build cache", reason="moved to the CI runners")
    assert old.fact is not None
    assert new.fact is not None
    assert new.superseded is not None
    assert gone.fact is not None
    lines = shared.store.retired_lines(["global", "agent:coder"])
    found = {(r.source, r.kind, r.fact_id) for r in lines}
    assert found == {
        ("global", "superseded", old.fact.id),
        ("agent:coder", "forgotten", gone.fact.id),
        ("agent:coder", "forget-record", gone.fact.id),
    }
    superseded = next(r for r in lines if r.kind == "superseded")
    assert (superseded.path, superseded.line) == (old.fact.source_path, old.fact.source_line)
    assert superseded.valid_to == new.fact.valid_from
    forgotten = next(r for r in lines if r.kind == "forgotten")
    assert forgotten.reason == "moved to the CI runners"
    assert shared.store.retired_lines(["global"]) == [superseded]
    assert shared.store.retired_lines([]) == []
    assert shared.store.retired_lines(["global"], [old.fact.source_path]) == [superseded]
    assert shared.store.retired_lines(["global", "agent:coder"], ["memory/none.md"]) == []
    assert shared.store.retired_lines(["global"], []) == []
