"""The embedder registry: built-in names, registration, entry-point plugins, errors."""

from __future__ import annotations

import logging
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.embeddings import (
    HashEmbedder,
    LocalEmbedder,
    OpenAIEmbedder,
    available_embedders,
    create_embedder,
    register_embedder,
    unregister_embedder,
)
from memdir.errors import ConfigError, EmbeddingError, InvalidInputError

PLUGIN_MODULE = """
from memdir.embeddings import HashEmbedder

class PluginEmbedder(HashEmbedder):
    provider = "plugin"

def broken(**options):
    raise AssertionError("never called")
"""


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real installed distribution with ``memdir.embedders`` entry points."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "memdir_test_plugin.py").write_text(PLUGIN_MODULE)
    info = site / "memdir_test_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: memdir-test-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [memdir.embedders]
            plugin = memdir_test_plugin:PluginEmbedder
            missing-module = memdir_test_no_such_module:Factory
            not-callable = memdir_test_plugin:__doc__
            local = memdir_test_plugin:broken
            """
        )
    )
    monkeypatch.syspath_prepend(str(site))
    return site


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        unregister_embedder(name)


def test_the_built_in_names_are_available() -> None:
    assert {"local", "openai", "hash", "none"} <= set(available_embedders())


def test_none_means_keyword_only() -> None:
    assert create_embedder("none") is None


def test_built_ins_are_created_with_their_options(tmp_path: Path) -> None:
    hashed = create_embedder("hash", dimensions=16)
    assert isinstance(hashed, HashEmbedder)
    assert hashed.dimensions == 16
    local = create_embedder(" Local ", batch_size=4, model_path=tmp_path / "absent.onnx")
    assert isinstance(local, LocalEmbedder)
    assert local.batch_size == 4  # created without touching the (absent) model file
    remote = create_embedder("openai", base_url="http://127.0.0.1:9/v1", model="m", dimensions=3)
    assert isinstance(remote, OpenAIEmbedder)
    assert remote.dimensions == 3


def test_an_unknown_name_lists_the_available_ones() -> None:
    with pytest.raises(ConfigError, match="unknown embedder 'sentence-bert'") as caught:
        create_embedder("sentence-bert")
    assert "hash, local, none, openai" in str(caught.value)


def test_an_unknown_option_names_the_accepted_ones() -> None:
    with pytest.raises(ConfigError, match="does not accept options") as caught:
        create_embedder("hash", dims=8)
    assert "['dims']" in str(caught.value)
    assert "its options are: dimensions" in str(caught.value)
    with pytest.raises(ConfigError, match="'none' does not accept"):
        create_embedder("none", model="x")


def test_a_rejected_option_value_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="invalid options for embedder 'hash'"):
        create_embedder("hash", dimensions=1)
    with pytest.raises(ConfigError, match="batch_size=0"):
        create_embedder("local", batch_size=0)


def test_a_registered_factory_is_created(cleanup: list[str]) -> None:
    register_embedder("tiny-hash", lambda size=8: HashEmbedder(dimensions=size))
    cleanup.append("tiny-hash")
    assert "tiny-hash" in available_embedders()
    created = create_embedder("tiny-hash", size=12)
    assert isinstance(created, HashEmbedder)
    assert created.dimensions == 12


def test_registering_a_taken_name_needs_replace(cleanup: list[str]) -> None:
    with pytest.raises(InvalidInputError, match="already registered"):
        register_embedder("hash", HashEmbedder)
    register_embedder("hash", lambda: HashEmbedder(dimensions=5), replace=True)
    cleanup.append("hash")
    created = create_embedder("hash")
    assert created is not None
    assert created.dimensions == 5
    unregister_embedder("hash")
    restored = create_embedder("hash")
    assert restored is not None
    assert restored.dimensions == 64


@pytest.mark.parametrize("name", ["", "Upper", "with space", "-dash", "x" * 65])
def test_invalid_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidInputError, match="invalid"):
        register_embedder(name, HashEmbedder)


def test_a_factory_must_return_an_embedder(cleanup: list[str]) -> None:
    register_embedder("wrong", lambda: "not an embedder")
    cleanup.append("wrong")
    with pytest.raises(EmbeddingError, match="returned a str, which lacks provider"):
        create_embedder("wrong")


def test_entry_point_plugins_are_listed_and_created(plugin_dir: Path) -> None:
    assert {"plugin", "missing-module", "not-callable"} <= set(available_embedders())
    created = create_embedder("plugin", dimensions=8)
    assert created is not None
    assert (created.provider, created.dimensions) == ("plugin", 8)


def test_a_plugin_that_fails_to_import_is_a_clear_error(plugin_dir: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"plugin 'missing-module'.*failed to load"):
        create_embedder("missing-module")
    with pytest.raises(EmbeddingError, match=r"plugin 'not-callable'.*not callable"):
        create_embedder("not-callable")


def test_a_plugin_cannot_shadow_a_built_in(
    plugin_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="memdir.embeddings.registry"):
        created = create_embedder("local", model_path=tmp_path / "absent.onnx")
        available_embedders()
    assert isinstance(created, LocalEmbedder)
    assert "shadows a built-in embedder" in caplog.text
