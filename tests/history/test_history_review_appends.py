"""Under ``curate.review = true`` extraction's facts and daily entry are one proposal,
filing a proposal twice keeps one, and an agent's extraction proposes USER.md changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memdir.embeddings.base import HashEmbedder
from memdir.interfaces.cli import app
from memdir.llm import Message, ScriptedChatModel
from memdir.memory import Memory

runner = CliRunner()
HASH = ["--set", "embeddings.provider=hash"]
FACTS = [
    {"text": "The deploy runs on Thursdays", "category": "decision", "importance": 8},
    {"text": "Alice owns the billing service", "category": "fact", "importance": 6},
]
REPLY = {
    "should_update": True,
    "reason": "the deploy day moved",
    "daily_entry": "- The deploy moved to Thursdays.",
    "facts": FACTS,
}
TALK = [
    Message("user", "Hi, I need help with our deployment schedule."),
    Message("assistant", "Sure, what would you like to know about it?"),
    Message("user", "We moved it around a few times this month."),
    Message("assistant", "Understood. What is the schedule now?"),
    Message("user", "Please remember that the deploy runs on Thursdays now."),
]


def run(home: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--home", str(home), *HASH, *args])
    return result.exit_code, result.stdout, result.stderr


def waiting(home: Path) -> list[dict[str, Any]]:
    code, out, _ = run(home, "proposals", "--json")
    assert code == 0
    found: list[dict[str, Any]] = json.loads(out)
    return found


def extract(home: Path, replies: list[dict[str, Any]], agent: str = "coder",
            review: bool = True) -> tuple[str, ...]:  # fmt: skip
    """Run extraction of session s1 once per reply; the proposals each run reports."""
    settings = {"curate": {"review": review, "extraction_cooldown_s": 0}}
    model = ScriptedChatModel([json.dumps(reply) for reply in replies])
    made: list[str] = []
    with Memory.open(home, agent, embedder=HashEmbedder(), chat_model=model,
                     overrides=settings) as memory:  # fmt: skip
        memory.init()
        memory.session("s1").extend(TALK)
        for _ in replies:
            result = memory.extract("s1")
            assert result.ran, result.skipped_reason
            assert not review or result.facts_saved == 0
            made.extend(result.proposals)
    return tuple(made)


def facts_of(home: Path, agent: str = "coder") -> list[str]:
    with Memory.open(home, agent, embedder=HashEmbedder()) as memory:
        return sorted(fact.text for fact in memory.list_facts())


def notes_of(home: Path, agent: str = "coder") -> str:
    return "".join(p.read_text() for p in sorted((home / "agents" / agent / "memory").glob("*.md")))


def test_extracted_facts_and_entry_wait_as_one_proposal_and_land_when_accepted(
    home: Path,
) -> None:
    (proposal,) = extract(home, [REPLY])
    assert facts_of(home) == []  # nothing landed
    assert "Thursdays" not in notes_of(home)
    (listed,) = waiting(home)
    assert listed["kind"] == "append"
    assert listed["path"].startswith("memory/")
    code, out, _ = run(home, "proposals")
    assert f"{proposal}" in out
    assert "agent coder  extract" in out
    assert "(+1 lines, 2 facts)" in out
    code, out, _ = run(home, "proposals", "show", proposal)
    assert code == 0
    assert "+### Conversation notes " in out
    assert "+- The deploy moved to Thursdays.\n" in out
    assert "+ The deploy runs on Thursdays  (category: decision, importance: 8)" in out
    assert "+ Alice owns the billing service  (category: fact, importance: 6)" in out
    code, out, err = run(home, "proposals", "accept", proposal)
    assert code == 0, err
    assert "2 of 2 facts new" in out
    assert facts_of(home) == ["Alice owns the billing service", "The deploy runs on Thursdays"]
    assert notes_of(home).count("- The deploy moved to Thursdays.") == 1
    assert waiting(home) == []
    code, out, _ = run(home, "--agent", "coder", "history", listed["path"], "--json")
    versions = json.loads(out)["versions"]
    reasons = [v["reason"] for v in versions if v["tool"] == "extract"]
    assert len(reasons) == 3  # each fact, then the entry
    assert all(r.startswith(f"accepted proposal {proposal} by ") for r in reasons)
    assert all("(memdir proposals accept): extracted from session s1" in r for r in reasons)


def test_an_append_proposal_accepted_twice_or_after_its_facts_were_saved_adds_no_duplicate(
    home: Path,
) -> None:
    (proposal,) = extract(home, [REPLY])
    kept = home / "proposals" / f"{proposal}.json"
    copy = home / "copy.json"
    shutil.copy(kept, copy)
    with Memory.open(home, "coder", embedder=HashEmbedder()) as memory:
        memory.save("The deploy runs on Thursdays", category="decision")  # saved another way
    code, out, err = run(home, "proposals", "accept", proposal)
    assert code == 0, err
    assert "1 of 2 facts new" in out
    assert facts_of(home) == ["Alice owns the billing service", "The deploy runs on Thursdays"]
    code, _, err = run(home, "proposals", "accept", proposal)  # gone once accepted
    assert code == 1
    assert f"no proposal {proposal!r}" in err
    shutil.copy(copy, kept)  # as if the accept had stopped before removing it
    code, out, err = run(home, "proposals", "accept", proposal)
    assert code == 0, err
    assert "0 of 2 facts new" in out
    assert facts_of(home) == ["Alice owns the billing service", "The deploy runs on Thursdays"]
    assert notes_of(home).count("- The deploy moved to Thursdays.") == 1


def test_a_rejected_append_proposal_writes_nothing(home: Path) -> None:
    (proposal,) = extract(home, [REPLY])
    code, out, _ = run(home, "proposals", "reject", proposal)
    assert code == 0
    assert f"rejected {proposal}" in out
    assert waiting(home) == []
    assert facts_of(home) == []
    assert "Thursdays" not in notes_of(home)


def test_a_retried_extraction_files_its_proposals_once(home: Path) -> None:
    memory_md = "# Memory\n\n- Deploys run on Fridays.\n"
    home.mkdir(parents=True)
    with Memory.open(home, "coder", embedder=HashEmbedder()) as memory:
        memory.init()
        memory.write_file("MEMORY.md", memory_md)
    reply = dict(REPLY, memory_update=memory_md + "- Alice owns billing.\n")
    first, second = extract(home, [reply]), extract(home, [reply])
    assert len(first) == 2  # the MEMORY.md rewrite and the appends
    assert second == first  # the same change again: the proposals waiting
    assert sorted(p["id"] for p in waiting(home)) == sorted(first)


def test_a_retried_consolidation_files_its_proposal_once(home: Path) -> None:
    review = [*HASH, "--set", "curate.review=true"]
    run(home, "init")
    run(home, "save", "We decided to use PostgreSQL for billing.")
    run(home, "files", "write", "MEMORY.md", "--content", "# Memory\n\n- Deploys on Fridays.\n")
    made = []
    for _ in range(2):
        result = runner.invoke(app, ["--home", str(home), *review, "consolidate", "--json"])
        assert result.exit_code == 0, result.stderr
        made.append(json.loads(result.stdout)["proposals"])
    assert made[0] == made[1]
    assert len(made[0]) == 1
    assert [p["id"] for p in waiting(home)] == made[0]


PREFERENCE = "# USER.md\n\n- **Name:** Ada\n- Prefers tabs over spaces.\n"


@pytest.mark.parametrize("review", [False, True])
def test_an_agents_extraction_proposes_what_it_learned_about_the_user(
    home: Path, review: bool
) -> None:
    own = "# Memory\n\n- The user prefers tabs.\n"
    reply = {"should_update": True, "reason": "a preference", "profile_update": PREFERENCE,
             "memory_update": own}  # fmt: skip
    with Memory.open(home, embedder=HashEmbedder()) as person:
        person.init()
        before = person.read_file("USER.md")
    made = extract(home, [reply], review=review)
    assert (home / "workspace" / "USER.md").read_text() == before  # the owner decides
    assert not (home / "agents" / "coder" / "USER.md").exists()
    shared = [p for p in waiting(home) if p["path"] == "USER.md"]
    (listed,) = shared
    assert (listed["kind"], listed["agent"]) == ("shared", "coder")
    proposal = listed["id"]
    # the agent's own MEMORY.md: written, or under review proposed as ever
    written = (home / "agents" / "coder" / "MEMORY.md").read_text() == own
    assert written is not review
    assert len(made) == (2 if review else 1)
    code, out, _ = run(home, "proposals", "show", proposal)
    assert "+- Prefers tabs over spaces.\n" in out
    code, out, err = run(home, "proposals", "accept", proposal)
    assert code == 0, err
    with Memory.open(home, "coder", embedder=HashEmbedder()) as agent:
        assert "- Prefers tabs over spaces." in agent.system_prompt()
    code, out, _ = run(home, "history", "USER.md", "--json")
    last = json.loads(out)["versions"][0]
    assert last["reason"].startswith(f"accepted proposal {proposal} by ")


def test_a_compactions_flush_under_review_proposes_its_facts(home: Path) -> None:
    from memdir.agent.flush import make_flush

    review = {"curate": {"review": True}}
    with Memory.open(home, "coder", embedder=HashEmbedder(), overrides=review) as memory:
        memory.init()
        result = make_flush(memory)(TALK)  # no model: the user's explicit statements
        assert result.facts_saved == 0
        assert memory.list_facts() == []
    (listed,) = waiting(home)
    assert (listed["kind"], listed["tool"], listed["content"]) == ("append", "flush", "")
    assert [fact["text"] for fact in listed["facts"]] == ["The deploy runs on Thursdays now"]
    assert listed["id"] in result.note
    code, _, err = run(home, "proposals", "accept", listed["id"])
    assert code == 0, err
    assert facts_of(home) == ["The deploy runs on Thursdays now"]
