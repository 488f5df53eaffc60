"""An archive carries the home's settings without secrets; a hostile archive writes nothing."""

from __future__ import annotations

import json
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.access import AccessTokens
from memdir.config import load_settings
from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError
from memdir.history.archive import BUNDLE, MANIFEST, SETTINGS
from memdir.interfaces.cli import app
from memdir.memory import Memory

OPENAI_KEY = "sk-proj-Q7vN2xLm9RtY4wBzK8pD3fHjS6aE1cUo5iGk0TbVnMq"
PASSWORD = "Tr0ub4dor-and-3-horses"
COMMENT_KEY = "ghp_Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0HgFeDcBa"
SETTINGS_TOML = f"""\
# the old key, kept here by mistake: {COMMENT_KEY}
[embeddings]
provider = "hash"
api_key_env = "{OPENAI_KEY}"

[search]
max_results = 9
min_score = 0.05

[llm]
api_key_env = "TEAM_LLM_KEY"
timeout_s = 12.5

[store]
dsn = "postgresql://alice:{PASSWORD}@db.example.com:5432/memdir"

[server]
port = 9001

[index]
extra_paths = ["projects"]
"""


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_settings_travel_without_secrets_and_apply_except_the_machines(tmp_path: Path) -> None:
    first, second, archive = tmp_path / "first", tmp_path / "second", tmp_path / "home.memdir"
    first.mkdir()
    (first / "memdir.toml").write_text(SETTINGS_TOML)
    cli("--home", str(first), "init")
    cli("--home", str(first), "save", "The deploy window is Tuesday at noon.")
    token, _ = AccessTokens(first).create("coder", "laptop")
    said = cli("--home", str(first), "archive", "export", str(archive))
    assert "left out the password of store.dsn" in said
    assert "left out the value of embeddings.api_key_env" in said

    data = archive.read_bytes()
    for secret in (OPENAI_KEY, PASSWORD, COMMENT_KEY, token):
        assert secret.encode() not in data
    with zipfile.ZipFile(archive) as opened:
        manifest = json.loads(opened.read(MANIFEST))
    assert {(i["key"], i["what"]) for i in manifest["settings"]["left_out"]} == {
        ("store.dsn", "the password"),
        ("embeddings.api_key_env", "the value"),
    }

    second.mkdir()
    (second / "memdir.toml").write_text('[search]\nmax_results = 4\n[store]\nbackend = "sqlite"\n')
    said = cli("--home", str(second), "archive", "import", str(archive))
    assert "applied setting embeddings.provider" in said
    assert "not applied search.max_results: this home's memdir.toml sets it" in said
    assert "not applied store.dsn: it belongs to this machine" in said
    settings = load_settings(second).settings
    assert settings.embeddings.provider == "hash"  # applied
    assert settings.search.min_score == 0.05
    assert settings.llm.api_key_env == "TEAM_LLM_KEY"  # a variable's name travels
    assert settings.llm.timeout_s == 12.5
    assert settings.search.max_results == 4  # this home's file wins
    assert settings.embeddings.api_key_env is None  # left out at export
    assert settings.store.dsn is None  # the machine's: not applied
    assert settings.server.port == 8765
    assert settings.index.extra_paths == ["projects"]  # relative to the workspace: travels
    written = (second / "memdir.toml").read_text()
    assert PASSWORD not in written
    assert OPENAI_KEY not in written
    assert not (second / "tokens.json").exists()  # tokens never travel
    assert "Tuesday at noon" in cli("--home", str(second), "search", "deploy window")


def _good_archive(tmp_path: Path, settings: str = "[search]\nmax_results = 9\n") -> Path:
    home, archive = tmp_path / "source", tmp_path / "good.memdir"
    home.mkdir(exist_ok=True)
    (home / "memdir.toml").write_text(settings)
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        memory.write_file("MEMORY.md", "- kept\n")
        memory.export_archive(archive)
    return archive


def _rewritten(archive: Path, change: Callable[[dict[str, bytes]], dict[str, bytes]]) -> Path:
    with zipfile.ZipFile(archive) as opened:
        entries = {name: opened.read(name) for name in opened.namelist()}
    hostile = archive.with_name("hostile.memdir")
    with zipfile.ZipFile(hostile, "w") as out:
        for name, data in change(entries).items():
            out.writestr(name, data)
    return hostile


def _manifest(change: Callable[[dict[str, object]], None]) -> Callable[..., dict[str, bytes]]:
    def edit(entries: dict[str, bytes]) -> dict[str, bytes]:
        manifest = json.loads(entries[MANIFEST])
        change(manifest)
        return {**entries, MANIFEST: json.dumps(manifest).encode()}

    return edit


HOSTILE: dict[str, tuple[Callable[[dict[str, bytes]], dict[str, bytes]], str]] = {
    "manifest history out of the archive": (
        _manifest(lambda m: m.update(history="../../etc/passwd")),
        "names the history '../../etc/passwd'",
    ),
    "manifest settings file out of the home": (
        _manifest(lambda m: m.update(settings={"file": "../memdir.toml", "left_out": []})),
        "names the settings",
    ),
    "an entry with a path out": (
        lambda e: {**e, "../agents/x/MEMORY.md": b"- planted\n"},
        "unexpected entry '../agents/x/MEMORY.md'",
    ),
    "unknown setting": (
        lambda e: {**e, SETTINGS: b"[search]\nteleport = true\n"},
        "'search.teleport', which this memdir does not know",
    ),
    "unknown section": (
        lambda e: {**e, SETTINGS: b"[hooks]\nrun = 'curl evil'\n"},
        "'hooks', which this memdir does not know",
    ),
    "invalid value": (
        lambda e: {**e, SETTINGS: b"[search]\nmax_results = 100000\n"},
        "search.max_results",
    ),
    "huge settings": (
        lambda e: {**e, SETTINGS: b"# " + b"x" * 200_000 + b"\n"},
        "memdir.toml is over 64 KiB",
    ),
    "newer format": (_manifest(lambda m: m.update(version=99)), "upgrade memdir"),
    "terminal escapes in the manifest": (
        _manifest(
            lambda m: m.update(
                settings={
                    "file": SETTINGS,
                    "left_out": [{"key": "\x1b[2J", "what": "x", "why": "y"}],
                }
            )
        ),
        "settings.left_out holds",
    ),
    "no bundle": (lambda e: {k: v for k, v in e.items() if k != BUNDLE}, "no history.bundle"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_and_writes_nothing(tmp_path: Path, case: str) -> None:
    change, message = HOSTILE[case]
    hostile = _rewritten(_good_archive(tmp_path), change)
    target = tmp_path / "target"
    pattern = "(?s)" + message.replace("(", r"\(")
    with (
        Memory.open(target, embedder=HashEmbedder(), chat_model=None) as memory,
        pytest.raises(InvalidInputError, match=pattern) as err,
    ):
        memory.import_archive(hostile)
    fixes = ("memdir archive export", "--no-settings", "upgrade memdir")
    assert any(fix in str(err.value) for fix in fixes)  # the error names the fix
    assert not target.exists() or not any(target.iterdir())
    assert not (tmp_path / "agents").exists()


def _bundle_of(tmp_path: Path, build: Callable[[Path], None]) -> Path:
    """A bare git bundle (the archive format before settings travelled) of a repository
    ``build`` fills."""
    repo = tmp_path / "crafted"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    build(repo)
    git("add", "-A")
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "crafted")
    bundle = tmp_path / "crafted.bundle"
    git("bundle", "create", "-q", str(bundle), "HEAD")
    return bundle


def _with_link(repo: Path) -> None:
    (repo / "workspace").mkdir()
    (repo / "workspace" / "MEMORY.md").write_text("- hi\n")
    (repo / "workspace" / "passwd.md").symlink_to("/etc/passwd")


def _outside(repo: Path) -> None:
    (repo / "workspace").mkdir()
    (repo / "workspace" / "MEMORY.md").write_text("- hi\n")
    (repo / "tokens.json").write_text("{}")


def _encoding(repo: Path) -> None:
    (repo / "workspace").mkdir()
    (repo / "workspace" / "MEMORY.md").write_text("- hi\n")
    (repo / ".gitattributes").write_text("*.md text eol=crlf\n")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (_with_link, "'workspace/passwd.md' \\(a symlink\\)"),
        (_outside, "'tokens.json' \\(outside workspace/ and agents/\\)"),
        (_encoding, "'.gitattributes' \\(changed from memdir's own\\)"),
    ],
)
def test_a_bundle_whose_files_leave_the_workspaces_writes_nothing(
    tmp_path: Path, build: Callable[[Path], None], message: str
) -> None:
    bundle = _bundle_of(tmp_path, build)
    target = tmp_path / "target"
    with (
        Memory.open(target, embedder=HashEmbedder(), chat_model=None) as memory,
        pytest.raises(InvalidInputError, match=message),
    ):
        memory.import_archive(bundle)
    assert not target.exists() or not any(target.iterdir())


def test_an_archive_from_before_settings_travelled_still_imports(tmp_path: Path) -> None:
    home = tmp_path / "old"
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as memory:
        memory.init()
        memory.write_file("MEMORY.md", "- from an old archive\n")
        memory.history.flush()
    legacy = tmp_path / "old.memdir"
    subprocess.run(
        ["git", "-C", str(home), "bundle", "create", "-q", str(legacy), "HEAD"], check=True
    )
    with Memory.open(tmp_path / "new", embedder=HashEmbedder(), chat_model=None) as memory:
        done = memory.import_archive(legacy)
        assert done.legacy
        assert done.settings is None
        assert memory.read_file("MEMORY.md") == "- from an old archive\n"
        assert memory.search("old archive").hits


def test_no_settings_imports_the_files_alone(tmp_path: Path) -> None:
    hostile = _rewritten(
        _good_archive(tmp_path), lambda e: {**e, SETTINGS: b"[search]\nmax_results = 100000\n"}
    )
    target = tmp_path / "target"
    with Memory.open(target, embedder=HashEmbedder(), chat_model=None) as memory:
        done = memory.import_archive(hostile, settings=False)
        assert done.settings is None
        assert memory.read_file("MEMORY.md") == "- kept\n"
    assert not (target / "memdir.toml").exists()
