"""``memdir import claude-code|openclaw|codex``: another tool's Markdown memories become an
agent workspace, as one version, indexed, never overwriting, refusing credentials."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.interfaces.cli import app

FOLDERS = Path(__file__).parent / "foreign"
runner = CliRunner()
FAST = ["--set", "embeddings.provider=hash"]

EXPECTED = {
    "claude-code": {
        "CLAUDE.md": "AGENTS.md",
        "memory/MEMORY.md": "MEMORY.md",
        "memory/debugging.md": "memory/debugging.md",
        "memory/api-conventions.md": "memory/api-conventions.md",
    },
    "openclaw": {
        "AGENTS.md": "AGENTS.md",
        "SOUL.md": "SOUL.md",
        "USER.md": "imported/USER.md",
        "MEMORY.md": "MEMORY.md",
        "memory/2026-03-02.md": "memory/2026-03-02.md",
        "memory/2026-03-03.md": "memory/2026-03-03.md",
    },
    "codex": {
        "MEMORY.md": "MEMORY.md",
        "memory_summary.md": "memory/memory_summary.md",
        "raw_memories.md": "memory/raw_memories.md",
        "rollout_summaries/019a-table-tests.md": "memory/rollout_summaries/019a-table-tests.md",
        "skills/release-notes/SKILL.md": "skills/release-notes/SKILL.md",
    },
}
LEFT_OUT = {"openclaw": {"BOOTSTRAP.md"}, "codex": {"skills/release-notes/scripts/list-prs.sh"}}
REWRITTEN = {  # links between imported files, pointed at where the files landed
    ("claude-code", "memory/MEMORY.md"): [
        ("](debugging.md)", "](memory/debugging.md)"),
        ("](api-conventions.md)", "](memory/api-conventions.md)"),
    ],
}
QUESTION = {
    "claude-code": ("websocket tests flake", "memory/debugging.md"),
    "openclaw": ("ferry to Porto", "memory/2026-03-02.md"),
    "codex": ("invoices rounded half-even", "MEMORY.md"),
}


def run(home: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--home", str(home), *FAST, *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("tool", sorted(EXPECTED))
def test_a_tools_folder_becomes_an_agent_workspace_in_one_version(tool: str, home: Path) -> None:
    folder = FOLDERS / tool
    code, out, err = run(home, "--agent", "imported", "import", tool, str(folder), "--json")
    assert code == 0, err
    report = json.loads(out)
    done = {f["source"]: f["target"] for f in report["files"] if f["action"] == "imported"}
    assert done == EXPECTED[tool]
    skipped = {f["source"] for f in report["files"] if f["action"] == "skipped"}
    assert skipped == LEFT_OUT.get(tool, set())
    root = home / "agents" / "imported"
    for source, target in EXPECTED[tool].items():
        expected = (folder / source).read_text(encoding="utf-8")
        for before, after in REWRITTEN.get((tool, source), ()):
            expected = expected.replace(before, after)
        assert (root / target).read_text(encoding="utf-8") == expected
    # one version holds the whole import, with who and why
    code, out, _ = run(home, "--agent", "imported", "history", "--json")
    versions = json.loads(out)["versions"]
    imports = [v for v in versions if v["tool"] == "import"]
    assert len(imports) == 1
    assert imports[0]["id"].startswith(report["version"])
    assert sorted(imports[0]["paths"]) == sorted(EXPECTED[tool].values())
    assert str(folder) in imports[0]["reason"]
    # indexed: a search finds the imported text and cites its file
    query, cited = QUESTION[tool]
    code, out, _ = run(home, "--agent", "imported", "search", query, "--json")
    assert code == 0
    assert json.loads(out)["hits"][0]["path"] == cited


def test_an_existing_file_is_kept_and_the_conflict_reported(home: Path) -> None:
    run(home, "--agent", "coder", "files", "write", "MEMORY.md", "--content", "- mine\n")
    code, out, _ = run(home, "--agent", "coder", "import", "claude-code",
                       str(FOLDERS / "claude-code"))  # fmt: skip
    assert code == 1
    assert "conflict: memory/MEMORY.md (MEMORY.md already exists; kept)" in out
    assert "3 imported" in out
    root = home / "agents" / "coder"
    assert (root / "MEMORY.md").read_text() == "- mine\n"
    assert (root / "memory" / "debugging.md").is_file()
    # a second import of the same folder writes nothing: every file is a conflict
    code, out, _ = run(home, "--agent", "coder", "import", "claude-code",
                       str(FOLDERS / "claude-code"), "--json")  # fmt: skip
    assert code == 1
    assert json.loads(out)["version"] is None
    assert {f["action"] for f in json.loads(out)["files"]} == {"conflict"}


def test_a_file_with_a_credential_is_refused_and_named(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "workspace"
    shutil.copytree(FOLDERS / "openclaw", folder)
    leaky = folder / "memory" / "2026-03-04.md"
    leaky.write_text("- the deploy token is ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF\n")
    (folder / "memory" / "latin1.md").write_bytes("caf\xe9\n".encode("latin-1"))
    (folder / "memory" / "a:b.md").write_text("- a name memdir cannot keep\n")
    code, out, _ = run(home, "--agent", "pi", "import", "openclaw", str(folder))
    assert code == 1
    assert "refused: memory/2026-03-04.md (memory/2026-03-04.md holds what looks like a " \
        "credential" in out  # fmt: skip
    assert "refused: memory/latin1.md (memory/latin1.md is not UTF-8 text" in out
    assert "refused: memory/a:b.md (invalid workspace path 'memory/a:b.md'" in out
    root = home / "agents" / "pi"
    assert not (root / "memory" / "2026-03-04.md").exists()
    assert (root / "memory" / "2026-03-03.md").is_file()  # the others came, as a version
    code, out, _ = run(home, "--agent", "pi", "history", "--json")
    (version,) = [v for v in json.loads(out)["versions"] if v["tool"] == "import"]
    assert "memory/2026-03-03.md" in version["paths"]
    assert "ghp_" not in "".join(p.read_text() for p in root.rglob("*.md"))


def test_bad_input_names_the_fix(home: Path, tmp_path: Path) -> None:
    code, _, err = run(home, "import", "codex", str(FOLDERS / "codex"))
    assert code != 0
    assert "--agent NAME" in err
    code, _, err = run(home, "--agent", "x", "import", "codex", str(tmp_path / "nowhere"))
    assert code == 1
    assert "no folder at" in err
    code, _, err = run(home, "--agent", "x", "import", "codex", str(FOLDERS / "claude-code"))
    assert code == 1
    assert "does not look like a codex memory folder" in err
    assert not (home / "agents" / "x").exists()


def test_the_global_options_follow_import_as_before(home: Path) -> None:
    """`memdir import` alone is still the copy to PostgreSQL, and takes --home after it."""
    result = runner.invoke(app, ["import", "--home", str(home), "--dry-run"])
    assert result.exit_code == 1
    assert "no PostgreSQL connection string" in result.stderr
    code, out, err = run(home, "import", "--agent", "cc", "codex", str(FOLDERS / "codex"))
    assert code == 0, err
    assert "into agent cc" in out


def test_a_project_with_only_a_claude_md_brings_only_its_instructions(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "repo"
    (project / "docs").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("# Instructions\n\n- Use pnpm.\n")
    (project / "README.md").write_text("# A project\n")
    (project / "docs" / "guide.md").write_text("# Guide\n")
    code, out, err = run(home, "--agent", "repo", "import", "claude-code", str(project), "--json")
    assert code == 0, err
    files = json.loads(out)["files"]
    assert [(f["source"], f["target"], f["action"]) for f in files] == [
        ("CLAUDE.md", "AGENTS.md", "imported")
    ]


def test_links_between_imported_files_reach_them_and_others_are_reported(home: Path) -> None:
    folder = FOLDERS / "claude-code-links"
    code, out, err = run(home, "--agent", "cc", "import", "claude-code", str(folder), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["links_rewritten"] == 6
    assert sorted(map(tuple, report["links_left"])) == [
        ("AGENTS.md", "../CONTRIBUTING.md"),
        ("MEMORY.md", "../../design.md"),
        ("MEMORY.md", "diagram.png"),
    ]
    root = home / "agents" / "cc"
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "- [Debugging](memory/debugging.md): flaky" in index
    assert "[Flaky tests](memory/debugging.md#flaky-tests)" in index
    assert "[Release checklist](<memory/notes/release checklist.md>)" in index
    assert "[api]: memory/api-conventions.md" in index
    assert "(https://pnpm.io/cli/install)" in index
    assert "[this section](#memory-index)" in index
    assert "`[Debugging](debugging.md)`" in index  # code is not a link
    assert "```markdown\n[Debugging](debugging.md)\n```" in index
    # a person (or an agent reading what it cited) following each link reaches the file
    followed = {
        "MEMORY.md": ["memory/debugging.md", "memory/notes/release checklist.md",
                      "memory/api-conventions.md"],
        "memory/debugging.md": ["../MEMORY.md", "notes/release%20checklist.md"],
        "memory/api-conventions.md": ["./debugging.md"],
        "memory/notes/release checklist.md": ["../../MEMORY.md"],
        "AGENTS.md": ["memory/debugging.md"],
    }  # fmt: skip
    for file, links in followed.items():
        text = (root / file).read_text(encoding="utf-8")
        for link in links:
            assert f"({link})" in text or f"(<{link}>)" in text or f": {link}" in text
            assert (root / file).parent.joinpath(link.replace("%20", " ")).resolve().is_file()
    # everything else is byte for byte what the tool wrote
    source = (folder / "memory" / "debugging.md").read_text(encoding="utf-8")
    assert (root / "memory" / "debugging.md").read_text(encoding="utf-8") == source.replace(
        "(MEMORY.md)", "(../MEMORY.md)"
    )
