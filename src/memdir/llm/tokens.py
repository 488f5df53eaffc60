"""Token estimates for text and messages.

With ``tiktoken`` installed *and* its ``cl100k_base`` file already in tiktoken's
local cache, counts come from that encoding. Otherwise (the default) a token is
estimated as four characters, rounded up. tiktoken downloads its BPE file on
first use, which memdir never allows at run time, so the cache file is found and
its checksum verified here before tiktoken is asked for the encoding; a missing
or damaged file means the character heuristic, never a download.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from memdir.llm.base import Message
from memdir.text import tokens_for_chars

logger = logging.getLogger(__name__)

MESSAGE_OVERHEAD_TOKENS = 4
REPLY_OVERHEAD_TOKENS = 3
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

Counter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """Tokens in ``text``: cl100k_base when available offline, else ceil(chars / 4)."""
    if not text:
        return 0
    return _counter()(text)


def estimate_tokens_by_chars(text: str) -> int:
    """The character heuristic alone: ceil(len(text) / 4) (``memdir.text``)."""
    return tokens_for_chars(len(text))


def estimate_message_tokens(message: Message) -> int:
    """Tokens one message costs in a request: content, tool calls, names, overhead."""
    total = MESSAGE_OVERHEAD_TOKENS + estimate_tokens(message.content)
    if message.name:
        total += estimate_tokens(message.name) + 1
    if message.tool_call_id:
        total += estimate_tokens(message.tool_call_id)
    for call in message.tool_calls:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        total += estimate_tokens(call.id) + estimate_tokens(call.name) + estimate_tokens(arguments)
    return total


def estimate_messages_tokens(messages: Iterable[Message]) -> int:
    """Tokens a whole request costs, including the reply primer."""
    return REPLY_OVERHEAD_TOKENS + sum(estimate_message_tokens(m) for m in messages)


def token_counting_method() -> str:
    """``"tiktoken:cl100k_base"`` or ``"chars/4"``: what ``estimate_tokens`` uses."""
    return "chars/4" if _counter() is estimate_tokens_by_chars else "tiktoken:cl100k_base"


@functools.cache
def _counter() -> Counter:
    counter = _load_local_cl100k()
    return counter if counter is not None else estimate_tokens_by_chars


def tiktoken_cache_file(url: str = CL100K_URL) -> Path | None:
    """Where tiktoken caches ``url`` (its own rule), or None when caching is off."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            directory = os.environ[variable]
            break
    else:
        directory = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not directory:
        return None
    return Path(directory) / hashlib.sha1(url.encode()).hexdigest()


def _load_local_cl100k() -> Counter | None:
    try:
        import tiktoken
    except ImportError:
        return None
    path = tiktoken_cache_file()
    if path is None or not path.is_file():
        logger.debug("tiktoken cl100k_base is not cached locally; estimating chars/4")
        return None
    try:
        if hashlib.sha256(path.read_bytes()).hexdigest() != CL100K_SHA256:
            logger.debug("tiktoken cache file %s is damaged; estimating chars/4", path)
            return None
        encoding = tiktoken.get_encoding("cl100k_base")
    except (OSError, ValueError) as exc:
        logger.debug("tiktoken unavailable (%s); estimating chars/4", exc)
        return None

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count
