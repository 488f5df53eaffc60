"""Profile files are searched for what was written in them, not for their template."""

from __future__ import annotations

from pathlib import Path

from memdir import Memory
from memdir.embeddings.base import HashEmbedder


def test_a_filled_profile_line_is_found_and_the_template_is_not(tmp_path: Path) -> None:
    with Memory.open(tmp_path, embedder=HashEmbedder(64)) as memory:
        memory.init()
        memory.sync()
        fresh = memory.search("What are they working on? What do they care about?")
        assert fresh.hits == ()
        assert fresh.notice.startswith("no memory files indexed yet")
        memory.edit_file("USER.md", "- **Name:**", "- **Name:** Alice Okafor")
        memory.sync()
        found = memory.search("Alice Okafor")
    assert [h.citation for h in found.hits] == ["USER.md:8-8"]
    assert found.hits[0].text == "- **Name:** Alice Okafor"
