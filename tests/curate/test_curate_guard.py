"""replace_guarded: atomic, locked rewrites with history and the 75% loss guard."""

from __future__ import annotations

from pathlib import Path

import pytest
from curate_support import FakeClock

from memdir.curate import replace_guarded
from memdir.errors import InvalidInputError
from memdir.workspace.seeding import load_template


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


# -- what counts as loss (docs/curation.md, "The loss guard") --------------------------------

USER_TEMPLATE = load_template("USER.md")


def _filled_profile() -> str:
    """The seeded USER.md as a model fills it: five fields and a preference, all else kept."""
    text = USER_TEMPLATE
    for field, value in (
        ("Name", "Alice Moreau"),
        ("What to call them", "Alice"),
        ("Timezone", "Europe/Berlin"),
        ("Languages", "English, French"),
    ):
        text = text.replace(f"- **{field}:**\n", f"- **{field}:** {value}\n")
    return text.replace("- (none recorded yet)", "- Short answers, no small talk")


def test_filling_in_the_seeded_profile_loses_nothing(tmp_path: Path, clock: FakeClock) -> None:
    (tmp_path / "USER.md").write_text(USER_TEMPLATE)
    filled = _filled_profile()
    update = replace_guarded(tmp_path, "USER.md", filled, clock=clock)
    assert update.status == "written", update.refusal
    assert update.check.total == 0  # template lines and empty fields hold no knowledge
    assert (tmp_path / "USER.md").read_text() == filled
    assert update.history is not None  # the template is backed up all the same


def test_correcting_a_filled_field_is_a_revision(tmp_path: Path, clock: FakeClock) -> None:
    (tmp_path / "USER.md").write_text(_filled_profile())
    moved = _filled_profile().replace("Europe/Berlin", "America/New_York")
    update = replace_guarded(tmp_path, "USER.md", moved, clock=clock)
    assert update.status == "written", update.refusal
    assert (update.check.total, update.check.kept, update.check.revised) == (5, 4, 1)


def test_dropping_what_was_learned_about_the_user_is_refused(
    tmp_path: Path, clock: FakeClock
) -> None:
    filled = _filled_profile()
    (tmp_path / "USER.md").write_text(filled)
    blank_again = USER_TEMPLATE.replace("- **Name:**\n", "- **Name:** Alice Moreau\n")
    update = replace_guarded(tmp_path, "USER.md", blank_again, clock=clock)
    assert update.status == "refused"
    assert update.check.lost == (
        "what to call them: alice",
        "timezone: europe/berlin",
        "languages: english, french",
        "short answers, no small talk",
    )
    assert (tmp_path / "USER.md").read_text() == filled
    assert update.history is not None
    assert update.history.endswith("-refused.md")
    assert (tmp_path / update.history).read_text() == blank_again


@pytest.mark.parametrize(
    ("old", "corrected"),
    [
        ("- Staging runs in eu-west-1\n", "- Staging runs in us-east-2\n"),
        (
            "- Staging runs in eu-west-1\n- Alice owns billing\n",
            "- Staging runs in us-east-2\n- Alice owns billing\n",
        ),
        (
            "- The deploy is on Thursdays\n- Alice owns billing\n- Tags are vMAJOR.MINOR\n",
            "- The deploy is on Fridays\n- Alice owns billing\n- Tags are vMAJOR.MINOR\n",
        ),
    ],
)
def test_correcting_one_entry_of_a_small_memory_is_accepted(
    tmp_path: Path, clock: FakeClock, old: str, corrected: str
) -> None:
    (tmp_path / "MEMORY.md").write_text(old)
    update = replace_guarded(tmp_path, "MEMORY.md", corrected, clock=clock)
    assert update.status == "written", update.refusal
    assert update.check.revised == 1
    assert update.check.lost == ()
    assert update.history is not None
    assert (tmp_path / update.history).read_text() == old


@pytest.mark.parametrize(
    ("old", "new", "lost"),
    [
        (  # one of two entries dropped: half the file
            "- Staging runs in eu-west-1\n- Alice owns billing\n",
            "- Staging runs in eu-west-1\n",
            ("alice owns billing",),
        ),
        (  # the only entry replaced by something unrelated
            "- Alice owns billing\n",
            "- The office plants need water on Mondays\n",
            ("alice owns billing",),
        ),
        (  # a correction that also drops another entry
            "- The deploy is on Thursdays\n- Alice owns billing\n- Tags are vMAJOR.MINOR\n",
            "- The deploy is on Fridays\n- Alice owns billing\n",
            ("tags are vmajor.minor",),
        ),
    ],
)
def test_a_real_loss_is_refused_and_the_proposal_kept(
    tmp_path: Path, clock: FakeClock, old: str, new: str, lost: tuple[str, ...]
) -> None:
    (tmp_path / "MEMORY.md").write_text(old)
    update = replace_guarded(tmp_path, "MEMORY.md", new, clock=clock)
    assert update.status == "refused"
    assert update.check.lost == lost
    assert (tmp_path / "MEMORY.md").read_text() == old
    assert update.history is not None
    assert (tmp_path / update.history).read_text() == new
    assert update.refusal is not None
    assert update.history in update.refusal


def test_merging_two_entries_into_one_keeps_both(tmp_path: Path, clock: FakeClock) -> None:
    old = "- Alice owns billing\n- Alice owns invoicing\n- Bob owns search\n- Cy owns docs\n"
    merged = "- Alice owns billing and invoicing\n- Bob owns search\n- Cy owns docs\n"
    (tmp_path / "MEMORY.md").write_text(old)
    update = replace_guarded(tmp_path, "MEMORY.md", merged, clock=clock)
    assert update.status == "written", update.refusal
    assert (update.check.kept, update.check.revised) == (2, 2)


def test_a_dry_run_keeps_no_refused_proposal(tmp_path: Path, clock: FakeClock) -> None:
    (tmp_path / "MEMORY.md").write_text("- Alice owns billing\n")
    update = replace_guarded(
        tmp_path, "MEMORY.md", "- Plants need water\n", clock=clock, dry_run=True
    )
    assert update.status == "refused"
    assert update.history is None
    assert not (tmp_path / ".history").exists()
