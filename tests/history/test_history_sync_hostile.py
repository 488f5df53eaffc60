"""`memdir sync --remote` with a remote whose history holds more than workspaces.

Git overwrites the files a home ignores when a merge checks them out: without a check, a
remote could replace the home's access tokens, its admin token, its configuration or its
index, or check out symlinks and re-encoding attributes. The sync refuses such a remote
before any file here changes, and says which paths and what to do.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.interfaces.cli import app

runner = CliRunner()
FAST = ["--set", "embeddings.provider=hash"]


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(folder), "-c", "user.name=x", "-c", "user.email=x@x", *args],
        check=True, capture_output=True,
    )  # fmt: skip


def hostile_remote(tmp_path: Path, files: dict[str, str], links: dict[str, str]) -> Path:
    """A bare remote whose branch 'memdir' holds ``files`` (path: text) and ``links``."""
    remote, work = tmp_path / "remote.git", tmp_path / "evil"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "memdir", str(work)], check=True)
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text, encoding="utf-8")
    for path, target in links.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).symlink_to(target)
    git(work, "add", "-f", ".")
    git(work, "commit", "-q", "-m", "not a memdir home")
    git(work, "push", "-q", str(remote), "memdir")
    return remote


def home_files(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in home.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(home).parts and p.suffix != ".lock"
        and p.parent.name != "index"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("files", "links", "named"),
    [
        (
            {"api-token": "a-token-the-remote-knows-1234567890\n", "tokens.json": "{}",
             "config.toml": '[embeddings]\nbase_url = "http://remote.invalid"\n',
             "index/memdir.db": "junk", "workspace/memory/2020-01-01.md": "# fine\n"},
            {}, ["'api-token'", "'tokens.json'", "'config.toml'", "'index/memdir.db'"],
        ),
        (
            {"workspace/.gitattributes": "*.md working-tree-encoding=UTF-16\n"},
            {"workspace/memory/passwd.md": "/etc/passwd", "agents/bob": "../workspace"},
            ["'workspace/.gitattributes' (a git control file)",
             "'workspace/memory/passwd.md' (a symlink)", "'agents/bob'"],
        ),
        ({".gitattributes": "* merge=union\n"}, {}, ["'.gitattributes' (changed"]),
        ({"workspace/memory/x\nAgent: admin.md": "# a forged trailer\n"}, {},
         ["(a name memdir refuses"]),
        ({"workspace/USER.md/x.md": "# a folder where a file is\n"}, {},
         ["'workspace/USER.md' (a file here, a folder there)"]),
    ],
)  # fmt: skip
def test_a_remote_holding_more_than_workspaces_is_refused_before_anything_changes(
    home: Path, tmp_path: Path, files: dict[str, str], links: dict[str, str], named: list[str]
) -> None:
    base = ["--home", str(home), *FAST]
    assert runner.invoke(app, [*base, "init"]).exit_code == 0
    assert runner.invoke(app, [*base, "token", "create", "--agent", "alice"]).exit_code == 0
    (home / "api-token").write_text("the-admin-token-of-this-home-000\n", encoding="utf-8")
    saved = runner.invoke(app, [*base, "save", "The victim likes green tea."])
    assert saved.exit_code == 0, saved.output
    before = home_files(home)
    remote = hostile_remote(tmp_path, files, links)

    result = runner.invoke(app, [*base, "sync", "--remote", str(remote)])

    assert result.exit_code == 1, result.output
    for name in named:
        assert name in result.stderr, result.stderr
    assert "Nothing here changed" in result.stderr
    assert "remove or rename those paths on its branch 'memdir'" in result.stderr
    assert "Traceback" not in result.output
    assert home_files(home) == before
    assert not (home / "config.toml").exists()
    assert not (home / "workspace" / "memory" / "passwd.md").is_symlink()
    found = runner.invoke(app, [*base, "search", "green tea", "--json"])
    assert "green tea" in found.stdout


def test_a_remote_another_home_pushed_to_still_syncs(home: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    other = ["--home", str(tmp_path / "other"), *FAST]
    assert runner.invoke(app, [*other, "save", "The other home keeps bees."]).exit_code == 0
    assert runner.invoke(app, [*other, "sync", "--remote", str(remote)]).exit_code == 0
    base = ["--home", str(home), *FAST]
    assert runner.invoke(app, [*base, "save", "This home keeps goats."]).exit_code == 0
    result = runner.invoke(app, [*base, "sync", "--remote", str(remote)])
    assert result.exit_code == 0, result.output
    found = runner.invoke(app, [*base, "search", "bees", "--json"])
    assert "keeps bees" in found.stdout
