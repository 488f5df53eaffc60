"""Lines and sizes of text, counted one way everywhere in memdir.

Line numbers are what citations are made of (``path:start-end``), so the workspace, the
index and the tools split text into lines with one rule; token estimates by characters
(the prompt report, chunk sizes, the offline fallback of ``llm.estimate_tokens``) use
one ratio. A leaf: any layer may import it.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def split_lines(text: str) -> list[str]:
    """Split text into lines as editors number them: on ``\\n`` only; a ``\\r`` before it
    belongs to the line ending, not the line; a final ``\\n`` ends the last line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def tokens_for_chars(chars: int) -> int:
    """Estimated tokens in ``chars`` characters: ``ceil(chars / 4)``."""
    return -(-chars // CHARS_PER_TOKEN)
