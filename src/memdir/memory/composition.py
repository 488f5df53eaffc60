"""Builders that turn settings into providers and policies, for the ``Memory`` facade.

Part of the composition root: only ``memdir.memory`` calls these. Keeping them here
keeps the facade a list of operations rather than a list of constructors.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memdir.config import Settings
from memdir.embeddings import create_embedder
from memdir.embeddings.base import Embedder
from memdir.errors import ChatModelError, ConfigError, InvalidInputError
from memdir.facts import (
    DecideFn,
    FactCandidate,
    FactDecision,
    build_decision_prompt,
    decide_heuristically,
)
from memdir.facts.recall import RecallFloor
from memdir.llm import ChatModel, Message, complete_structured, create_chat_model
from memdir.search.calibration import choose_calibration
from memdir.workspace import validate_prefix

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # the policies' layers load when a chat or a curation asks for them
    from memdir.context import ContextPolicy
    from memdir.curate import ExtractionPolicy

_DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


_EMBEDDER_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "voyage": "VOYAGE_API_KEY",
}


def configured_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``embeddings.*`` asks for (``None`` for keyword-only)."""
    cfg = settings.embeddings
    options: dict[str, object] = {}
    if cfg.provider in _EMBEDDER_KEY_ENV:
        options.update(_remote_embedder_options(settings))
    elif cfg.provider == "local":
        options["batch_size"] = cfg.batch_size
    return create_embedder(cfg.provider, **options)


def _remote_embedder_options(settings: Settings) -> dict[str, object]:
    cfg = settings.embeddings
    if cfg.provider == "openai" and (not cfg.base_url or not cfg.model):
        raise ConfigError(
            "embeddings.provider = 'openai' needs embeddings.base_url and embeddings.model"
        )
    key_env = cfg.api_key_env or _EMBEDDER_KEY_ENV[cfg.provider]
    api_key = os.environ.get(key_env)
    if cfg.provider != "openai" and not cfg.base_url and not api_key:
        raise ConfigError(
            f"embeddings.provider = {cfg.provider!r} needs an API key: set the {key_env} "
            "environment variable (or name another one in embeddings.api_key_env)"
        )
    options: dict[str, object] = {
        "batch_size": cfg.batch_size, "api_key": api_key, "timeout": cfg.timeout_s,
    }  # fmt: skip
    if cfg.base_url:
        options["base_url"] = cfg.base_url
    if cfg.model:
        options["model"] = cfg.model
    if cfg.dimensions:
        options.update(dimensions=cfg.dimensions, send_dimensions=True)
    return options


def configured_chat_model(settings: Settings) -> ChatModel | None:
    """The chat model ``llm.*`` asks for (``None``: features fall back to heuristics)."""
    cfg = settings.llm
    if cfg.provider in ("none", ""):
        return None
    if not cfg.model:
        raise ConfigError(f"llm.provider = {cfg.provider!r} needs llm.model (the model name)")
    options: dict[str, object] = {"timeout": cfg.timeout_s, "max_retries": cfg.max_retries}
    key_env = cfg.api_key_env or _DEFAULT_KEY_ENV.get(cfg.provider)
    if key_env:
        options["api_key"] = os.environ.get(key_env)
        options["api_key_setting"] = f"the {key_env} environment variable (llm.api_key_env)"
    if cfg.base_url:
        options["base_url"] = cfg.base_url
    if cfg.context_window:
        options["context_window"] = cfg.context_window
    return create_chat_model(cfg.provider, model=cfg.model, **options)


def context_policy(settings: Settings) -> ContextPolicy:
    from memdir.context import ContextPolicy

    cfg = settings.context
    return ContextPolicy(
        max_input_tokens=cfg.max_input_tokens,
        flush_ratio=cfg.flush_ratio,
        compact_trigger_ratio=cfg.compact_trigger_ratio,
        warn_ratio=cfg.warn_ratio,
        prune_ratio=cfg.prune_ratio,
        preserve_recent_messages=cfg.preserve_recent_messages,
        preserve_recent_pairs=cfg.preserve_recent_pairs,
        summary_max_tokens=cfg.summary_max_tokens,
        compact_target_ratio=cfg.compact_target_ratio,
        compact_min_gain_ratio=cfg.compact_min_gain_ratio,
    )


def extraction_policy(settings: Settings) -> ExtractionPolicy:
    from memdir.curate import ExtractionPolicy

    cfg = settings.curate
    return ExtractionPolicy(
        min_messages=cfg.extract_min_messages,
        min_last_user_chars=cfg.extract_min_user_chars,
        max_messages=cfg.extract_max_messages,
        max_message_chars=cfg.extract_max_message_chars,
        cooldown_s=cfg.extraction_cooldown_s,
    )


def model_decider(model: ChatModel | None) -> DecideFn | None:
    """Let the chat model decide add / update / supersede / nothing for a new fact.

    A model that fails (down, timing out, answering JSON that does not validate even
    after the repair request) never fails the save: the documented heuristic decides
    instead, and a warning says so.
    """
    if model is None:
        return None

    def decide(new_text: str, candidates: Sequence[FactCandidate]) -> FactDecision:
        prompt = build_decision_prompt(new_text, candidates)
        messages = [Message(role="user", content=prompt)]
        try:
            return complete_structured(model, messages, FactDecision)
        except ChatModelError as exc:
            log.warning(
                "the fact decision fell back to the heuristic: %s/%s failed: %s",
                model.provider, model.model, exc,
            )  # fmt: skip
            return decide_heuristically(new_text, candidates)

    return decide


def extra_index_paths(settings: Settings) -> list[str]:
    """``index.extra_paths``, checked: workspace-relative folders or ``.md`` files."""
    checked = []
    for path in settings.index.extra_paths:
        try:
            checked.append(validate_prefix(path).strip("/"))
        except InvalidInputError as exc:
            raise ConfigError(
                f"index.extra_paths holds {path!r}, which is not a workspace-relative "
                f"folder or .md file ({exc}); use e.g. 'notes' or 'projects/plan.md'"
            ) from exc
    return [path for path in checked if path]


def recall_floor(embedder: Embedder | None, min_score: float) -> RecallFloor | None:
    """Recall's scores on search's scale: the embedder's cosine-only calibration (a recall
    has no keyword coverage) and the search floor; None keeps them relative."""
    if embedder is None:
        return None
    calibration = choose_calibration(embedder.provider, embedder.model, False)
    if calibration is None:
        return None
    return RecallFloor(lambda cosine: calibration.confidence(cosine, None), min_score)
