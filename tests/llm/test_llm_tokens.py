"""Token estimates: the chars/4 heuristic and the offline-only tiktoken check."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from memdir.llm import (
    Message,
    ToolCall,
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_tokens,
    token_counting_method,
)
from memdir.llm.tokens import estimate_tokens_by_chars, tiktoken_cache_file

chars_only = pytest.mark.skipif(
    token_counting_method() != "chars/4", reason="tiktoken cl100k_base is available locally"
)


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2)])
def test_char_heuristic(text: str, tokens: int) -> None:
    assert estimate_tokens_by_chars(text) == tokens


@chars_only
def test_default_is_the_char_heuristic() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 10
    assert estimate_tokens(text) == math.ceil(len(text) / 4)


def test_tiktoken_absent_means_chars() -> None:
    if importlib.util.find_spec("tiktoken") is not None:
        pytest.skip("tiktoken is installed here")
    assert token_counting_method() == "chars/4"


def test_message_estimate_counts_everything() -> None:
    plain = Message("user", "hello world")
    named = Message("user", "hello world", name="ana")
    call = ToolCall("call_1", "memory_search", {"query": "what did we decide about the db"})
    with_call = Message("assistant", "hello world", tool_calls=(call,))
    assert estimate_message_tokens(plain) == 4 + estimate_tokens("hello world")
    assert estimate_message_tokens(named) > estimate_message_tokens(plain)
    assert estimate_message_tokens(with_call) > estimate_message_tokens(plain) + 8
    assert estimate_messages_tokens([plain, named]) == (
        3 + estimate_message_tokens(plain) + estimate_message_tokens(named)
    )


def test_cache_file_follows_tiktoken_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    path = tiktoken_cache_file()
    assert path is not None
    assert path.parent == tmp_path
    assert path.name == "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tiktoken_cache_file() is None
