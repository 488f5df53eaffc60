"""A testing aid: a scripted chat model whose replies come from a Python file.

With ``llm.provider = "scripted"`` the ``memdir chat`` command loads the file
named by the ``MEMDIR_CHAT_SCRIPT`` environment variable and drives a
``ScriptedChatModel`` with its ``reply(messages, tools, schema)`` function. It
exists so that the terminal chat can be tested end to end without a network;
it is not a way to configure a real model.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from memdir.errors import ConfigError
from memdir.llm import ScriptedChatModel
from memdir.llm.scripted import ReplyFunction

SCRIPT_ENV = "MEMDIR_CHAT_SCRIPT"


def load_reply_function(path: str | os.PathLike[str]) -> ReplyFunction:
    """The ``reply`` function defined by the Python file at ``path``."""
    location = Path(path)
    if not location.is_file():
        raise ConfigError(
            f"chat script {str(location)!r} does not exist; set {SCRIPT_ENV} to a Python "
            "file that defines reply(messages, tools, schema)"
        )
    spec = importlib.util.spec_from_file_location("memdir_chat_script", location)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot load chat script {str(location)!r}; it must be a .py file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except (SyntaxError, ImportError, OSError) as exc:
        raise ConfigError(f"chat script {str(location)!r} does not load: {exc}; fix it") from exc
    reply = getattr(module, "reply", None)
    if not callable(reply):
        raise ConfigError(
            f"chat script {str(location)!r} defines no reply(messages, tools, schema) function"
        )
    function: ReplyFunction = reply
    return function


def scripted_model_from_env(context_window: int | None = None) -> ScriptedChatModel:
    """The scripted model ``MEMDIR_CHAT_SCRIPT`` describes (``ConfigError`` when unset)."""
    path = os.environ.get(SCRIPT_ENV)
    if not path:
        raise ConfigError(
            f'llm.provider = "scripted" is a testing aid: set {SCRIPT_ENV} to a Python file '
            "that defines reply(messages, tools, schema)"
        )
    return ScriptedChatModel(
        load_reply_function(path), model=Path(path).stem, context_window=context_window or 8192
    )
