"""How full the context window is, and what that calls for.

The thresholds are fractions of the input budget (the model's window, or
``max_input_tokens`` when set): flush 0.60, compact 0.70, warn 0.80, hard prune
0.90. ``check_context()`` measures a message list against them.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from memdir.errors import ConfigError
from memdir.llm.base import ChatModel, Message
from memdir.llm.tokens import estimate_messages_tokens


class ContextLevel(enum.IntEnum):
    """How urgent the context is; levels compare in order of urgency."""

    OK = 0
    FLUSH = 1
    COMPACT = 2
    WARN = 3
    PRUNE = 4

    @property
    def label(self) -> str:
        """Lower-case name for logs and UIs: ``ok``, ``flush``, ``compact``, ``warn``, ``prune``."""
        return self.name.lower()


@dataclass(frozen=True)
class ContextPolicy:
    """Thresholds and sizes for the context window, all configurable.

    ``max_input_tokens`` overrides the model's window (MateClaw's
    ``default-max-input-tokens``). The tail kept whole after a compaction is the
    last ``preserve_recent_messages`` messages, or, when ``preserve_recent_pairs``
    is set, everything from the N-th last user message on (MateClaw's
    ``preserve-recent-pairs``). ``prune_target_ratio`` is where emergency
    compaction aims, well below the window because a context-length error means
    our estimate was short.

    Compaction leaves room, so it does not run on every turn: it aims at
    ``compact_target_ratio`` of the window (the tail kept whole gives way, down to
    the current turn, when keeping it would leave the context above that share),
    and below the prune level it runs only when it folds at least
    ``compact_min_gain_ratio`` of the window into the summary (0 turns that off).
    """

    max_input_tokens: int | None = None
    flush_ratio: float = 0.60
    compact_trigger_ratio: float = 0.70
    warn_ratio: float = 0.80
    prune_ratio: float = 0.90
    prune_target_ratio: float = 0.50
    compact_target_ratio: float = 0.50
    compact_min_gain_ratio: float = 0.10
    preserve_recent_messages: int = 4
    preserve_recent_pairs: int | None = None
    summary_max_tokens: int = 1024

    def __post_init__(self) -> None:
        ratios = (
            ("flush_ratio", self.flush_ratio),
            ("compact_trigger_ratio", self.compact_trigger_ratio),
            ("warn_ratio", self.warn_ratio),
            ("prune_ratio", self.prune_ratio),
        )
        targets = (
            ("prune_target_ratio", self.prune_target_ratio),
            ("compact_target_ratio", self.compact_target_ratio),
        )
        for name, value in (*ratios, *targets):
            if not 0.0 < value <= 1.0:
                raise ConfigError(
                    f"context {name} must be in (0, 1], got {value!r}; use a fraction such as 0.7"
                )
        values = [value for _, value in ratios]
        if values != sorted(values):
            raise ConfigError(
                "context thresholds must rise: flush_ratio <= compact_trigger_ratio <= "
                f"warn_ratio <= prune_ratio, got {values!r}; reorder them"
            )
        if not 0.0 <= self.compact_min_gain_ratio < 1.0:
            raise ConfigError(
                "context compact_min_gain_ratio must be in [0, 1), got "
                f"{self.compact_min_gain_ratio!r}; the default is 0.1, 0 turns it off"
            )
        _require_positive("max_input_tokens", self.max_input_tokens, allow_none=True)
        _require_positive("summary_max_tokens", self.summary_max_tokens)
        _require_positive("preserve_recent_pairs", self.preserve_recent_pairs, allow_none=True)
        if self.preserve_recent_messages < 0:
            raise ConfigError(
                "context preserve_recent_messages must be >= 0, got "
                f"{self.preserve_recent_messages!r}; the default is 4"
            )


def _require_positive(name: str, value: int | None, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if value is None or value <= 0:
        raise ConfigError(f"context {name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class ContextStatus:
    """A measurement: the estimated tokens, the budget, their ratio and the level."""

    level: ContextLevel
    tokens: int
    budget: int
    message_count: int

    @property
    def ratio(self) -> float:
        return self.tokens / self.budget

    def describe(self) -> str:
        """One line for logs: ``compact: 7,100 / 10,000 tokens (71%) in 42 messages``."""
        return (
            f"{self.level.label}: {self.tokens:,} / {self.budget:,} tokens "
            f"({self.ratio:.0%}) in {self.message_count} messages"
        )


def known_budget(policy: ContextPolicy, model: ChatModel | None = None) -> int | None:
    """``input_budget``, or None when neither the policy nor a model gives one."""
    if policy.max_input_tokens is None and (model is None or model.context_window <= 0):
        return None
    return input_budget(policy, model)


def input_budget(policy: ContextPolicy, model: ChatModel | None = None) -> int:
    """The input budget in tokens: ``max_input_tokens`` if set, else the model's window."""
    if policy.max_input_tokens is not None:
        return policy.max_input_tokens
    if model is not None and model.context_window > 0:
        return model.context_window
    raise ConfigError(
        "no context window is known: there is no chat model and ContextPolicy."
        "max_input_tokens is None; set max_input_tokens (e.g. 128000)"
    )


def level_for(ratio: float, policy: ContextPolicy) -> ContextLevel:
    """The most urgent level whose threshold ``ratio`` has reached."""
    if ratio >= policy.prune_ratio:
        return ContextLevel.PRUNE
    if ratio >= policy.warn_ratio:
        return ContextLevel.WARN
    if ratio >= policy.compact_trigger_ratio:
        return ContextLevel.COMPACT
    if ratio >= policy.flush_ratio:
        return ContextLevel.FLUSH
    return ContextLevel.OK


def check_context(
    messages: Sequence[Message],
    policy: ContextPolicy | None = None,
    *,
    model: ChatModel | None = None,
) -> ContextStatus:
    """Measure ``messages`` against the budget and name the level it calls for."""
    policy = policy or ContextPolicy()
    budget = input_budget(policy, model)
    tokens = estimate_messages_tokens(messages)
    return ContextStatus(
        level=level_for(tokens / budget, policy),
        tokens=tokens,
        budget=budget,
        message_count=len(messages),
    )
