"""The window a model really accepts, learned from its context-length error.

A configured window can be wrong: a local server started with a smaller context
than the model's card says. When the server refuses a request as too long, its
error usually says how long the window is, and often how long the request was:

* OpenAI and vLLM: ``This model's maximum context length is 8192 tokens. However,
  your messages resulted in 9000 tokens`` (or ``you requested 5000 tokens (4000 in
  the messages, 1000 in the completion)``);
* llama.cpp: ``request (5000 tokens) exceeds the available context size (4096
  tokens)``; LM Studio: ``context length of only 4096 tokens``;
* Anthropic: ``prompt is too long: 210000 tokens > 200000 maximum``.

``read_context_limit()`` reads those numbers (``ContextLimit``); ``learned_budget()``
turns them into a budget in memdir's own token estimate, the unit of every
threshold: the window scaled by how our estimate of the refused request compares
with the server's count (``window * estimated / counted``), less the room the
request kept for the completion. An error with no numbers (or a window no smaller
than our estimate of the refused request, which means our estimate counts short)
still says the window is below the request: the budget becomes 80% of the refused
request's estimate, so repeated refusals shrink it geometrically. A learned budget
never exceeds the one in force.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UNREADABLE_SHRINK = 0.8

_NUMBER = r"(\d[\d,]*)"
_WINDOW_PATTERNS = (
    re.compile(rf"maximum context length (?:is|of) {_NUMBER}", re.IGNORECASE),
    re.compile(rf"context (?:size|length|window)[^\d]{{0,30}}?\(?{_NUMBER} tokens", re.IGNORECASE),
    re.compile(rf"{_NUMBER} tokens? > {_NUMBER} maximum", re.IGNORECASE),
    re.compile(rf"n_ctx\D{{0,4}}{_NUMBER}", re.IGNORECASE),
    re.compile(rf"(?:limit|maximum|max)[^\d]{{0,20}}{_NUMBER} tokens", re.IGNORECASE),
)
_REQUEST_PATTERNS = (
    re.compile(rf"resulted in {_NUMBER} tokens", re.IGNORECASE),
    re.compile(rf"\(({_NUMBER[1:-1]}) in the messages", re.IGNORECASE),
    re.compile(rf"requested {_NUMBER} tokens", re.IGNORECASE),
    re.compile(rf"request \({_NUMBER} tokens\)", re.IGNORECASE),
    re.compile(rf"too long: {_NUMBER} tokens", re.IGNORECASE),
    re.compile(rf"n_prompt_tokens\D{{0,4}}{_NUMBER}", re.IGNORECASE),
)
_COMPLETION = re.compile(rf"{_NUMBER} in the completion", re.IGNORECASE)


@dataclass(frozen=True)
class ContextLimit:
    """What a context-length error says: the window, the refused request's size (in
    the server's tokens) and the room it asked for the completion; None when unsaid."""

    window: int | None = None
    request: int | None = None
    completion: int = 0


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def read_context_limit(error: str) -> ContextLimit:
    """The numbers a context-length error gives (see the module docstring)."""
    window = None
    for pattern in _WINDOW_PATTERNS:
        found = pattern.search(error)
        if found:
            window = _int(found.group(found.lastindex or 1))
            break
    request = None
    for pattern in _REQUEST_PATTERNS:
        found = pattern.search(error)
        if found:
            request = _int(found.group(1))
            break
    completion = _COMPLETION.search(error)
    return ContextLimit(window, request, _int(completion.group(1)) if completion else 0)


def learned_budget(error: str, estimated: int, budget: int) -> int | None:
    """The budget (in memdir's estimate) the model really accepts, or None when the error
    says nothing smaller than ``budget``; ``estimated`` is our estimate of the refused
    request."""
    limit = read_context_limit(error)
    if limit.window is not None:
        window = max(1, limit.window - limit.completion)
        if limit.request is not None and limit.request > 0 and estimated > 0:
            learned = int(window * estimated / limit.request)
        elif estimated <= window:  # our estimate counts short: the window is below it
            learned = int(estimated * UNREADABLE_SHRINK)
        else:
            learned = window
    else:
        learned = int(estimated * UNREADABLE_SHRINK)
    if learned <= 0 or learned >= budget:
        return None
    return learned
