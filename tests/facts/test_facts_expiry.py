"""A fact saved with ``valid_until`` is current until then, and history afterwards."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError
from memdir.memory import Memory
from memdir.tools import ToolError, call_tool


def test_an_expired_fact_is_history_like_a_superseded_one(home: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        far = datetime.now(UTC) + timedelta(days=30)
        kept = memory.save("The office wifi password hint is the cat's name.", valid_until=far)
        soon = datetime.now(UTC) + timedelta(seconds=1.5)
        gone = memory.save("Parking is on level minus two this week.", valid_until=soon)
        assert gone.fact is not None
        assert kept.fact is not None
        assert gone.fact.valid_to == soon.replace(microsecond=soon.microsecond)
        time.sleep(max(0.0, (soon - datetime.now(UTC)).total_seconds()) + 0.3)

        current = {f.id for f in memory.list_facts()}
        assert kept.fact.id in current
        assert gone.fact.id not in current
        history = {f.id for f in memory.list_facts(include_superseded=True)}
        assert gone.fact.id in history
        assert [r.fact.id for r in memory.recall("where is parking")] != [gone.fact.id]
        assert gone.fact.id not in {r.fact.id for r in memory.recall("parking level")}
        past = memory.recall("parking level", as_of=soon - timedelta(seconds=1))
        assert gone.fact.id in {r.fact.id for r in past}

        hits = memory.search("parking level minus two").hits
        assert all("minus two" not in h.text for h in hits)
        with_history = memory.search("parking level minus two", include_history=True).hits
        assert any("minus two" in h.text for h in with_history)

        note = (home / "workspace" / gone.location.path).read_text()  # type: ignore[union-attr]
        assert "until=" in note  # the end is kept in the note, so a rebuild keeps it
        memory.rebuild()
        assert gone.fact.id not in {f.id for f in memory.list_facts()}
        assert kept.fact.id in {f.id for f in memory.list_facts()}


def test_a_past_or_bad_valid_until_is_refused_in_the_callers_terms(home: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        with pytest.raises(InvalidInputError, match="not in the future"):
            memory.save("Yesterday's fact.", valid_until=datetime.now(UTC) - timedelta(days=1))
        with pytest.raises(ToolError, match="valid_until"):
            call_tool(memory, "memory_save", {"content": "x is y", "valid_until": 1700000000})
        text = call_tool(
            memory, "memory_save", {"content": "The sprint ends soon.", "valid_until": "2999-01-31"}
        )
        assert "until 2999-01-31" in text
        assert memory.list_facts()[0].valid_to is not None
