"""The consolidation schedule that `memdir serve` runs, driven with run_due."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from memdir import Memory
from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.cli.server import consolidation_schedule
from memdir.interfaces.http.memories import AgentMemories


def test_scheduled_consolidation_promotes_repeated_notes(home: Path) -> None:
    memories = AgentMemories(lambda agent: Memory.open(home, agent, embedder=HashEmbedder()))
    memory = memories.get(None)
    memory.init()
    today = datetime.now()
    for days_ago in (1, 2):
        when = today - timedelta(days=days_ago)
        memory.append_daily("We decided to deploy on Fridays only.", when)
    scheduler = consolidation_schedule("0 2 * * *")(memories)
    runs = scheduler.run_due(now=datetime.now().astimezone() + timedelta(days=1))
    assert [run.name for run in runs] == ["consolidate"]
    assert all(run.error is None for run in runs)
    assert "deploy on Fridays" in (home / "workspace" / "MEMORY.md").read_text(encoding="utf-8")
    memories.close()
