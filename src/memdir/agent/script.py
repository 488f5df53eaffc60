"""A testing aid: a scripted chat model whose replies come from a Python file.

With ``llm.provider = "scripted"`` the ``memdir chat`` command loads the file
named by the ``MEMDIR_CHAT_SCRIPT`` environment variable and drives a
``ScriptedChatModel`` with its ``reply(messages, tools, schema)`` function. It
exists so that the terminal chat can be tested end to end without a network;
it is not a way to configure a real model.

When the file also defines ``curate(messages, tools, schema)``, the side work
(flush, summaries, correction checks, session notes, extraction) asks that
function as the ``Memory``'s model, as it would ask a real one; without it the
side work runs on the heuristics.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from memdir.errors import ConfigError
from memdir.llm import ScriptedChatModel
from memdir.llm.scripted import ReplyFunction

SCRIPT_ENV = "MEMDIR_CHAT_SCRIPT"


def load_reply_function(path: str | os.PathLike[str], name: str = "reply") -> ReplyFunction:
    """The ``reply`` function (or another function ``name``, which must exist) defined by
    the Python file at ``path``."""
    function = _load_function(path, name)
    if function is None:
        raise ConfigError(
            f"chat script {str(path)!r} defines no {name}(messages, tools, schema) function"
        )
    return function


def _load_function(path: str | os.PathLike[str], name: str) -> ReplyFunction | None:
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
    found = getattr(module, name, None)
    if not callable(found):
        return None
    function: ReplyFunction = found
    return function


def _script_path() -> str:
    path = os.environ.get(SCRIPT_ENV)
    if not path:
        raise ConfigError(
            f'llm.provider = "scripted" is a testing aid: set {SCRIPT_ENV} to a Python file '
            "that defines reply(messages, tools, schema)"
        )
    return path


def scripted_model_from_env(context_window: int | None = None) -> ScriptedChatModel:
    """The scripted model ``MEMDIR_CHAT_SCRIPT`` describes (``ConfigError`` when unset)."""
    path = _script_path()
    return ScriptedChatModel(
        load_reply_function(path), model=Path(path).stem, context_window=context_window or 8192
    )


def scripted_curation_model_from_env(
    context_window: int | None = None,
) -> ScriptedChatModel | None:
    """The model of the script's ``curate`` function, or None when it defines none."""
    path = _script_path()
    curate = _load_function(path, "curate")
    if curate is None:
        return None
    return ScriptedChatModel(
        curate, model=f"{Path(path).stem}-curate", context_window=context_window or 8192
    )
