"""replace_guarded: atomic, locked rewrites with history and the 75% loss guard."""

from __future__ import annotations

from pathlib import Path

import pytest
from curate_support import FakeClock

from memdir.curate import replace_guarded
from memdir.errors import InvalidInputError


def test_history_names_never_collide(tmp_path: Path, clock: FakeClock) -> None:
    (tmp_path / "MEMORY.md").write_text("- a\n")
    first = replace_guarded(tmp_path, "MEMORY.md", "- a\n- b\n", clock=clock)
    second = replace_guarded(tmp_path, "MEMORY.md", "- a\n- b\n- c\n", clock=clock)
    assert first.history is not None
    assert second.history is not None
    assert first.history != second.history
    assert second.history.endswith("-1.md")
    assert (tmp_path / first.history).read_text() == "- a\n"
    assert (tmp_path / second.history).read_text() == "- a\n- b\n"


def test_unchanged_text_writes_nothing(tmp_path: Path, clock: FakeClock) -> None:
    (tmp_path / "MEMORY.md").write_text("- a\n")
    update = replace_guarded(tmp_path, "MEMORY.md", "- a", clock=clock)
    assert update.status == "unchanged"
    assert not (tmp_path / ".history").exists()


def test_new_file_needs_no_history(tmp_path: Path, clock: FakeClock) -> None:
    update = replace_guarded(tmp_path, "USER.md", "# USER\n- Ada\n", clock=clock)
    assert update.status == "written"
    assert update.history is None
    assert (tmp_path / "USER.md").read_text() == "# USER\n- Ada\n"


def test_empty_rewrite_is_an_error(tmp_path: Path, clock: FakeClock) -> None:
    (tmp_path / "MEMORY.md").write_text("- a\n")
    with pytest.raises(InvalidInputError, match="is empty"):
        replace_guarded(tmp_path, "MEMORY.md", "\n\n", clock=clock)
    assert (tmp_path / "MEMORY.md").read_text() == "- a\n"


def test_headings_do_not_count_as_entries(tmp_path: Path, clock: FakeClock) -> None:
    (tmp_path / "MEMORY.md").write_text("# Old title\n## People\n- Ada\n- Bob\n- Cy\n- Di\n")
    update = replace_guarded(
        tmp_path, "MEMORY.md", "# New title\n- Ada\n- Bob\n- Cy\n- Di\n- Ed\n", clock=clock
    )
    assert update.status == "written"
    assert update.check.ratio == 1.0
