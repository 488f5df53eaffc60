"""The provider registry: built-ins, registration, entry points, option checks."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from memdir.errors import ConfigError
from memdir.llm import (
    AnthropicChatModel,
    OpenAIChatModel,
    ScriptedChatModel,
    available_chat_models,
    create_chat_model,
    register_chat_model,
)


def test_builtins() -> None:
    openai = create_chat_model("openai", model="llama3.2", base_url="http://localhost:11434/v1")
    assert isinstance(openai, OpenAIChatModel)
    assert openai.base_url == "http://localhost:11434/v1"
    assert isinstance(create_chat_model("anthropic", model="claude-x"), AnthropicChatModel)
    assert isinstance(create_chat_model("scripted", replies=["hi"]), ScriptedChatModel)
    assert create_chat_model("none") is None
    assert {"openai", "anthropic", "scripted", "none"} <= set(available_chat_models())


def test_unknown_name_lists_the_available_ones() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown chat model provider 'gpt'; available: .*openai"
    ):
        create_chat_model("gpt")


def test_unknown_option_lists_the_accepted_ones() -> None:
    with pytest.raises(
        ConfigError, match=r"does not accept option\(s\) apikey; it accepts: .*api_key"
    ):
        create_chat_model("openai", model="m", apikey="x")


def test_missing_required_option() -> None:
    with pytest.raises(ConfigError, match="'anthropic' needs option"):
        create_chat_model("anthropic")


def test_register_a_provider() -> None:
    name = f"custom-{uuid.uuid4().hex[:8]}"
    register_chat_model(name, lambda **options: ScriptedChatModel(["from custom"], **options))
    model = create_chat_model(name, model="mine")
    assert model is not None
    assert model.model == "mine"
    assert name in available_chat_models()
    with pytest.raises(ConfigError, match="already registered"):
        register_chat_model(name, ScriptedChatModel)
    register_chat_model(name, ScriptedChatModel, replace=True)
    assert isinstance(create_chat_model(name), ScriptedChatModel)


def test_entry_point_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suffix = uuid.uuid4().hex[:8]
    name, module = f"plugin-{suffix}", f"memdir_plugin_{suffix}"
    (tmp_path / f"{module}.py").write_text(
        "from memdir.llm import ScriptedChatModel\n"
        "def create(model='plugged', **options):\n"
        "    return ScriptedChatModel(['plugged in'], model=model)\n"
    )
    dist = tmp_path / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[memdir.chat_models]\n{name} = {module}:create\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert name in available_chat_models()
    model = create_chat_model(name)
    assert model is not None
    assert model.model == "plugged"
    assert model.complete([]).text == "plugged in"
