"""Embedder names and their factories, plus third-party providers from entry points.

    create_embedder("local")                             all-MiniLM-L6-v2, on this machine
    create_embedder("openai", base_url=..., model=...)   any OpenAI-compatible endpoint
    create_embedder("gemini", api_key=...)                Google's Gemini API
    create_embedder("voyage", api_key=...)                Voyage AI
    create_embedder("hash", dimensions=64)               the deterministic test double
    create_embedder("none")                              None: keyword-only search

A factory is any callable taking keyword options and returning an ``Embedder``
(or None). Adding a built-in provider is one module and one line in
``_BUILTIN``; another package adds one under the entry-point group
``memdir.embedders``::

    [project.entry-points."memdir.embedders"]
    myprovider = "mypackage.embedder:MyEmbedder"
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable
from importlib import metadata
from typing import Any

from memdir.embeddings.base import Embedder, HashEmbedder
from memdir.embeddings.gemini import GeminiEmbedder
from memdir.embeddings.local import LocalEmbedder
from memdir.embeddings.openai_compatible import OpenAIEmbedder
from memdir.embeddings.voyage import VoyageEmbedder
from memdir.errors import ConfigError, EmbeddingError, InvalidInputError

logger = logging.getLogger(__name__)

EmbedderFactory = Callable[..., Embedder | None]
ENTRY_POINT_GROUP = "memdir.embedders"
_MEMBERS = ("provider", "model", "dimensions", "embed_documents", "embed_query")
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def _create_none() -> None:
    """Keyword-only search: no embedder at all."""
    return None


_BUILTIN: dict[str, EmbedderFactory] = {
    "local": LocalEmbedder,
    "openai": OpenAIEmbedder,
    "gemini": GeminiEmbedder,
    "voyage": VoyageEmbedder,
    "hash": HashEmbedder,
    "none": _create_none,
}
_registered: dict[str, EmbedderFactory] = dict(_BUILTIN)


def register_embedder(name: str, factory: EmbedderFactory, *, replace: bool = False) -> None:
    """Make ``factory`` available as ``name``; an existing name needs ``replace=True``."""
    if not _NAME.fullmatch(name):
        raise InvalidInputError(
            f"embedder name {name!r} is invalid; use 1-64 of a-z, 0-9, '_' and '-', "
            "starting with a letter or digit"
        )
    if name in _registered and not replace:
        raise InvalidInputError(
            f"an embedder named {name!r} is already registered; pass replace=True to override it"
        )
    _registered[name] = factory


def unregister_embedder(name: str) -> None:
    """Forget a registered name; the built-in providers come back to their defaults."""
    if name in _BUILTIN:
        _registered[name] = _BUILTIN[name]
    else:
        _registered.pop(name, None)


def available_embedders() -> list[str]:
    """Every name ``create_embedder`` accepts, registered and from entry points, sorted."""
    return sorted(set(_registered) | set(_entry_points()))


def create_embedder(name: str, **options: Any) -> Embedder | None:
    """Build the embedder called ``name`` with ``options``; ``"none"`` gives None.

    An unknown name or option is a ``ConfigError`` that lists what is accepted.
    """
    key = name.strip().lower()
    factory = _registered.get(key) or _load_entry_point(key)
    if factory is None:
        raise ConfigError(
            f"unknown embedder {name!r}; available: {', '.join(available_embedders())}"
        )
    _check_options(key, factory, options)
    try:
        embedder = factory(**options)
    except ValueError as exc:  # a constructor rejecting an option value
        raise ConfigError(f"invalid options for embedder {key!r}: {exc}") from exc
    missing = [member for member in _MEMBERS if not _has_member(embedder, member)]
    if embedder is not None and missing:
        raise EmbeddingError(
            f"the factory for embedder {key!r} returned a {type(embedder).__name__}, "
            f"which lacks {', '.join(missing)}; fix or remove that provider"
        )
    return embedder


def _has_member(embedder: object, member: str) -> bool:
    # Static lookup: reading a lazy attribute such as a remote ``dimensions`` could
    # send a request, which isinstance() on a Protocol does before Python 3.12.
    try:
        inspect.getattr_static(embedder, member)
    except AttributeError:
        return False
    return True


def _check_options(name: str, factory: EmbedderFactory, options: dict[str, Any]) -> None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins without a signature: let the call decide
        return
    try:
        signature.bind(**options)
    except TypeError as exc:
        accepted = [
            parameter.name
            for parameter in signature.parameters.values()
            if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD)
        ]
        raise ConfigError(
            f"embedder {name!r} does not accept options {sorted(options)} ({exc}); "
            f"its options are: {', '.join(accepted) or '(none)'}"
        ) from exc


def _entry_points() -> dict[str, metadata.EntryPoint]:
    found = {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    for name in found.keys() & _BUILTIN.keys():
        logger.warning("ignoring entry point %r: it shadows a built-in embedder", name)
    return {name: ep for name, ep in found.items() if name not in _BUILTIN}


def _load_entry_point(name: str) -> EmbedderFactory | None:
    entry_point = _entry_points().get(name)
    if entry_point is None:
        return None
    try:
        factory = entry_point.load()
    # A plugin is foreign code: whatever its import raises becomes one clear error.
    except Exception as exc:
        raise EmbeddingError(
            f"the embedder plugin {name!r} ({entry_point.value}) failed to load: {exc!r}; "
            "reinstall or remove the package that provides it"
        ) from exc
    if not callable(factory):
        raise EmbeddingError(f"the embedder plugin {name!r} ({entry_point.value}) is not callable")
    factory_: EmbedderFactory = factory
    return factory_
