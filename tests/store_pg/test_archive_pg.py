"""An archive of a SQLite home imported on PostgreSQL answers as the home does, and back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pgserver_support import TestServer

from memdir import Memory
from memdir.embeddings.base import HashEmbedder

QUERIES = (
    "what does the user drink",
    "deploy day",
    "the cat",
    "parking",
    "which database for billing",
    "Helix editor",
)


def open_memory(home: Path, store: dict[str, object] | None = None) -> Memory:
    overrides = {"store": store} if store else None
    return Memory.open(home, "coder", overrides=overrides, embedder=HashEmbedder(), chat_model=None)


def answers(memory: Memory) -> list[object]:
    found: list[object] = []
    for query in QUERIES:
        hits = memory.search(query, include_history=True).hits
        found.append([(h.path, h.start_line, h.end_line, h.text, round(h.score, 4)) for h in hits])
        found.append([(r.fact.id, r.fact.text) for r in memory.recall(query)])
    facts = memory.list_facts(include_superseded=True, include_forgotten=True)
    found.append(sorted((f.id, f.text, f.valid_to, f.forgotten_at) for f in facts))
    return found


def test_an_archive_round_trips_sqlite_postgres_sqlite_with_the_same_answers(
    tmp_path: Path, pg_server: TestServer, pg_schema: str
) -> None:
    first, on_pg, back = tmp_path / "first", tmp_path / "on-pg", tmp_path / "back"
    to_pg, from_pg = tmp_path / "home.memdir", tmp_path / "from-pg.memdir"
    with open_memory(first) as memory:
        memory.init()
        memory.save("The user drinks green tea.")
        memory.save("The user drinks black coffee now.")
        memory.save("Deploys run on Fridays.", valid_until=datetime.now(UTC) + timedelta(days=9))
        fact = memory.save("The cat is called Luna.").fact
        assert fact is not None
        memory.forget(fact_id=fact.id, reason="a different cat")
        memory.save("We decided to use PostgreSQL for billing.")
        memory.write_file("MEMORY.md", "# Memory\n\n- Parking is on level two.\n")
        memory.write_file("notes/tools.md", "# Tools\n\n- The user edits in Helix.\n")
        memory.export_archive(to_pg)
        memory.rebuild()  # the answers of the files indexed from scratch, as an import does
        expected = answers(memory)
    assert all(expected[0 : 2 * len(QUERIES) : 2])  # every query finds something
    facts = expected[-1]
    assert isinstance(facts, list)
    assert len(facts) == 5  # the ended ones too
    store = {"backend": "postgres", "dsn": pg_server.dsn, "schema_name": pg_schema}
    with open_memory(on_pg, store) as memory:
        memory.import_archive(to_pg)
        assert not (on_pg / "index" / "memdir.db").exists()  # the index is in PostgreSQL
        assert answers(memory) == expected
        memory.export_archive(from_pg)
    with open_memory(back) as memory:
        memory.import_archive(from_pg)
        assert answers(memory) == expected


def _locomo(tmp_path: Path, copies: int = 1) -> Path:
    """A LoCoMo-shaped file of ``copies`` tiny conversations."""
    import json

    turns = [
        ("Caroline", "I went to the LGBTQ support group on Sunday."),
        ("Melanie", "That sounds lovely. I painted a lake at sunrise."),
        ("Caroline", "I want to study counseling next year."),
    ]
    sample = {
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": s, "dia_id": f"D1:{i}", "text": t}
                for i, (s, t) in enumerate(turns, 1)
            ],
        },
        "qa": [
            {"question": "What did Melanie paint?", "answer": "a lake", "evidence": ["D1:2"],
             "category": 4},
            {"question": "What will Caroline study?", "answer": "counseling",
             "evidence": ["D1:3"], "category": 4},
        ],
    }  # fmt: skip
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([sample] * copies))
    return data


def _roundtrip(*args: str) -> dict[str, Any]:
    import json

    from typer.testing import CliRunner

    from memdir.interfaces.cli import app

    result = CliRunner().invoke(app, ["bench", "roundtrip", "--embedder", "hash", *args])
    assert result.exit_code == 0, result.output
    figures: dict[str, Any] = json.loads(result.stdout)
    return figures


def test_the_roundtrip_benchmark_prints_the_same_figures_on_each_backend(
    tmp_path: Path, pg_server: TestServer
) -> None:
    import json

    from typer.testing import CliRunner

    from memdir.interfaces.cli import app

    data = _locomo(tmp_path)
    result = CliRunner().invoke(
        app, ["bench", "roundtrip", "--data", str(data), "--embedder", "hash",
              "--dsn", pg_server.dsn],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["questions"] == 2
    backends = figures["backends"]
    assert set(backends) == {"sqlite", "postgres", "sqlite-again"}
    for backend in backends.values():
        assert backend["questions_with_other_hits"] == 0
        assert backend["R@1024tok"] == backends["sqlite"]["R@1024tok"] > 0


def test_the_roundtrip_benchmark_grows_one_home_to_min_chunks(
    tmp_path: Path, pg_server: TestServer
) -> None:
    data = _locomo(tmp_path, copies=2)
    figures = _roundtrip(
        "--data", str(data), "--conversations", "0,1", "--min-chunks", "25", "--dsn", pg_server.dsn
    )
    assert figures["homes"] == 1
    assert figures["questions"] == 4  # both conversations' questions, in the one home
    backends = figures["backends"]
    for backend in backends.values():
        assert backend["chunks"] >= 25
        assert backend["chunks"] == backends["sqlite"]["chunks"]
        assert backend["questions_with_other_hits"] == 0
        # each question's evidence is its own conversation's line: found, not the copy's
        assert backend["R@1024tok"] == backends["sqlite"]["R@1024tok"] > 0
