from __future__ import annotations

from pathlib import Path

import pytest

from memdir.config import load_settings, parse_overrides, resolve_home
from memdir.errors import ConfigError


def write_toml(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "memdir.toml").write_text(text, encoding="utf-8")


def test_defaults_have_default_origin(home: Path) -> None:
    loaded = load_settings(home)
    assert loaded.settings.search.max_results == 6
    assert loaded.settings.embeddings.provider == "local"
    assert {v.origin for v in loaded.values()} == {"default"}


def test_precedence_toml_then_env_then_flag(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_toml(home, "[search]\nmax_results = 9\nfusion = 'weighted'\nmmr = true\n")
    monkeypatch.setenv("MEMDIR_SEARCH__MAX_RESULTS", "11")
    monkeypatch.setenv("MEMDIR_SEARCH__FUSION", "rrf")
    loaded = load_settings(home, parse_overrides(["search.max_results=13"]))
    s = loaded.settings.search
    assert (s.max_results, s.fusion, s.mmr) == (13, "rrf", True)
    origins = {v.key: v.origin for v in loaded.values()}
    assert origins["search.max_results"] == "flag"
    assert origins["search.fusion"] == "env MEMDIR_SEARCH__FUSION"
    assert origins["search.mmr"] == "memdir.toml"
    assert origins["search.min_score"] == "default"


def test_home_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert resolve_home(tmp_path / "x") == (tmp_path / "x").resolve()
    monkeypatch.setenv("MEMDIR_HOME", str(tmp_path / "y"))
    assert resolve_home() == (tmp_path / "y").resolve()
    monkeypatch.delenv("MEMDIR_HOME")
    assert resolve_home() == (Path.home() / ".memdir").resolve()


@pytest.mark.parametrize(
    ("toml", "fragment"),
    [
        ("[search]\nmax_results = 'many'\n", "search.max_results"),
        ("[nosuch]\nx = 1\n", "unknown configuration section 'nosuch'"),
        ("[search]\nbogus = 1\n", "search.bogus"),
        ("[search\n", "cannot parse"),
        ("[store]\nkeyword_ranking = 'fts5'\n", "delete store.keyword_ranking"),
        ("[store]\nworkspace_files = 'postgres'\n", "memdir export"),
    ],
)
def test_bad_toml_is_a_clear_error(home: Path, toml: str, fragment: str) -> None:
    write_toml(home, toml)
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    assert fragment in str(info.value)


def test_bad_env_names_the_variable(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDIR_INDEX__CHUNK_TOKENS", "-5")
    with pytest.raises(ConfigError, match="MEMDIR_INDEX__CHUNK_TOKENS"):
        load_settings(home)


@pytest.mark.parametrize("pair", ["nodot=1", "search.max_results", "=3", ".x=1"])
def test_bad_override_syntax(pair: str) -> None:
    with pytest.raises(ConfigError, match=r"SECTION\.KEY=VALUE"):
        parse_overrides([pair])


def test_every_setting_is_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [v.key for v in load_settings().values() if f"`{v.key}`" not in doc]
    assert missing == [], f"add these settings to docs/configuration.md: {missing}"
