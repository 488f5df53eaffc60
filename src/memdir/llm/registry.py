"""Chat model providers by name: built-ins, ``register_chat_model()`` and the
``memdir.chat_models`` entry-point group.

``create_chat_model(name, **options)`` returns a ``ChatModel``, or ``None`` for
the ``none`` provider (callers then fall back to their documented heuristic).
A third-party package registers a provider with an entry point whose value is a
factory taking keyword options::

    [project.entry-points."memdir.chat_models"]
    mymodel = "mypackage.chat:create_model"
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from memdir.errors import ConfigError
from memdir.llm.base import ChatModel
from memdir.llm.scripted import ScriptedChatModel

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "memdir.chat_models"
ChatModelFactory = Callable[..., ChatModel | None]


def create_no_model(**options: Any) -> None:
    """The ``none`` provider: no model; features fall back to heuristics."""
    return None


def create_openai(**options: Any) -> ChatModel:
    """The ``openai`` provider (any OpenAI-compatible server); imports httpx on first use."""
    from memdir.llm.openai_chat import OpenAIChatModel

    return OpenAIChatModel(**options)


def create_anthropic(**options: Any) -> ChatModel:
    """The ``anthropic`` provider; imports httpx on first use."""
    from memdir.llm.anthropic_chat import AnthropicChatModel

    return AnthropicChatModel(**options)


_factories: dict[str, ChatModelFactory] = {
    "openai": create_openai,
    "anthropic": create_anthropic,
    "scripted": ScriptedChatModel,
    "none": create_no_model,
}
# where the built-in lazy factories' classes live, so their real signatures are checked
_CLASS_OF = {
    create_openai: ("memdir.llm.openai_chat", "OpenAIChatModel"),
    create_anthropic: ("memdir.llm.anthropic_chat", "AnthropicChatModel"),
}
_lock = threading.Lock()


def register_chat_model(name: str, factory: ChatModelFactory, *, replace: bool = False) -> None:
    """Make ``factory`` available as ``create_chat_model(name, ...)``."""
    if not name or not name.strip():
        raise ConfigError("a chat model provider needs a non-empty name")
    with _lock:
        if name in _factories and not replace:
            raise ConfigError(
                f"chat model provider {name!r} is already registered; "
                "pass replace=True to override it"
            )
        _factories[name] = factory


def available_chat_models() -> list[str]:
    """Names of the registered and entry-point providers, sorted."""
    with _lock:
        names = set(_factories)
    names.update(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    return sorted(names)


def create_chat_model(name: str, **options: Any) -> ChatModel | None:
    """Build the provider ``name`` with keyword ``options``; ``None`` for ``none``.

    Raises ``ConfigError`` for an unknown name (listing the available ones) or an
    option the provider does not accept (listing the ones it does).
    """
    factory = _find_factory(name)
    if factory in _CLASS_OF:
        module, attribute = _CLASS_OF[factory]
        factory = getattr(import_module(module), attribute)
    _check_options(name, factory, options)
    return factory(**options)


def _find_factory(name: str) -> ChatModelFactory:
    with _lock:
        factory = _factories.get(name)
    if factory is not None:
        return factory
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name == name:
            loaded = entry_point.load()
            if not callable(loaded):
                raise ConfigError(
                    f"entry point {entry_point.value!r} for chat model {name!r} "
                    "is not callable; fix the package that provides it"
                )
            logger.debug("loaded chat model provider %r from %s", name, entry_point.value)
            with _lock:
                factory = _factories.setdefault(name, loaded)
            return factory
    raise ConfigError(
        f"unknown chat model provider {name!r}; available: {', '.join(available_chat_models())}"
    )


def _check_options(name: str, factory: ChatModelFactory, options: dict[str, Any]) -> None:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # some callables have no introspectable signature
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    accepted = {
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ConfigError(
            f"chat model provider {name!r} does not accept option(s) {', '.join(unknown)}; "
            f"it accepts: {', '.join(sorted(accepted))}"
        )
    required = [
        p.name
        for p in parameters
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        and p.name not in options
    ]
    if required:
        raise ConfigError(f"chat model provider {name!r} needs option(s) {', '.join(required)}")
