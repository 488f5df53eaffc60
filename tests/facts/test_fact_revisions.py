"""Facts by id: get, update as a supersession, history; kept in the notes, raced by processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.errors import EditError, InvalidInputError, NotFoundError
from memdir.facts import FactBook
from memdir.memory import Memory
from memdir.store.sqlite.connect import delete_database


def test_update_supersedes_and_history_walks_both_ways(book: FactBook) -> None:
    first = book.save("The standup is at 9:30", category="context").fact
    assert first is not None
    second = book.update(first.id, "The standup is at 10:00").fact
    assert second is not None
    third = book.update(second.id, "The standup is at 10:15", category="decision").fact
    assert third is not None
    assert (second.supersedes, second.category, second.importance) == (
        first.id, "context", first.importance,
    )  # fmt: skip
    assert third.category == "decision"
    for asked in (first.id, second.id, third.id):
        chain = book.history(asked)
        assert [v.fact.id for v in chain] == [first.id, second.id, third.id]
        assert [v.superseded_by for v in chain] == [second.id, third.id, None]
        assert [v.current for v in chain] == [False, False, True]
    old = book.version(first.id)
    assert old.fact.valid_to == second.valid_from
    assert old.superseded_by == second.id
    assert [f.id for f in book.list_facts()] == [third.id]


def test_only_the_current_version_can_be_updated(book: FactBook) -> None:
    first = book.save("Deploys happen on Tuesdays").fact
    assert first is not None
    second = book.update(first.id, "Deploys happen on Wednesdays").fact
    assert second is not None
    with pytest.raises(EditError, match=f"its latest version is '{second.id}'"):
        book.update(first.id, "Deploys happen on Thursdays")
    book.forget(second.id, reason="no more fixed deploy day")
    with pytest.raises(EditError, match="was forgotten"):
        book.update(second.id, "Deploys happen on Fridays")
    assert [v.current for v in book.history(first.id)] == [False, False]


@pytest.mark.parametrize("bad", ["", "f-", "F-ABCDEFGHIJ", "f-abc", "../f-abcdefghij", "x" * 200])
def test_a_malformed_id_names_the_shape_of_an_id(book: FactBook, bad: str) -> None:
    for call in (book.version, book.history, lambda i: book.update(i, "text")):
        with pytest.raises(InvalidInputError, match=r"e\.g\. 'f-ab12cd34ef'"):
            call(bad)


def test_update_text_is_checked_before_anything_is_written(book: FactBook) -> None:
    fact = book.save("The API key lives in the vault").fact
    assert fact is not None
    note = book.workspace.root / fact.source_path
    before = note.read_text()
    for text in ["", "two\nlines", "token ghp_" + "a1B2" * 9]:
        with pytest.raises(InvalidInputError):
            book.update(fact.id, text)
    assert note.read_text() == before
    assert book.version(fact.id).current


def test_another_agents_fact_is_not_found(home: Path) -> None:
    (home / "workspace").mkdir(parents=True)
    with Memory.open(home, "alice", embedder=HashEmbedder()) as alice:
        secret = alice.save("Alice's favourite band is Cardamom Sky").fact
        assert secret is not None
    with Memory.open(home, "bob", embedder=HashEmbedder()) as bob:
        for call in (bob.get_fact, bob.fact_history, lambda i: bob.update_fact(i, "mine now")):
            with pytest.raises(NotFoundError, match="no fact has the id") as caught:
                call(secret.id)
            assert "Cardamom" not in str(caught.value)
    with Memory.open(home, "alice", embedder=HashEmbedder()) as alice:
        assert alice.get_fact(secret.id).current


def test_the_chain_is_rebuilt_from_the_notes(home: Path) -> None:
    (home / "workspace").mkdir(parents=True)
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        first = memory.save("The printer is on floor 2").fact
        assert first is not None
        second = memory.update_fact(first.id, "The printer is on floor 3").fact
        assert second is not None
        assert memory.search("printer floor 3").hits  # indexed when the update returned
        path = memory.facts_path
    delete_database(path)
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.sync()
        chain = memory.fact_history(second.id)
        assert [(v.fact.id, v.fact.text) for v in chain] == [
            (first.id, "The printer is on floor 2"), (second.id, "The printer is on floor 3"),
        ]  # fmt: skip
        assert chain[0].superseded_by == second.id


RACE = """
import json, sys
from memdir.embeddings.base import HashEmbedder
from memdir.errors import EditError
from memdir.memory import Memory

home, fact_id, text = sys.argv[1:4]
with Memory.open(home, embedder=HashEmbedder()) as memory:
    try:
        print(json.dumps({"id": memory.update_fact(fact_id, text).fact.id}))
    except EditError as exc:
        print(json.dumps({"refused": str(exc)}))
"""


@pytest.mark.slow
def test_two_processes_updating_one_fact_never_fork_it(home: Path) -> None:
    (home / "workspace").mkdir(parents=True)
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        fact = memory.save("The release train leaves on Mondays").fact
        assert fact is not None
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, str(home), fact.id, f"The release train leaves on {day}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for day in ("Tuesdays", "Fridays")
    ]
    answers = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        answers.append(json.loads(out))
    made = [a["id"] for a in answers if "id" in a]
    assert len(made) == 1, answers
    assert any("update that id instead" in a.get("refused", "") for a in answers)
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        chain = memory.fact_history(fact.id)
        assert [v.fact.id for v in chain] == [fact.id, made[0]]
