"""Memory text as a terminal shows it: control characters made visible.

A note is written by agents and people, and a hostile one may hold terminal control
sequences: ``ESC ] 52`` writes the user's clipboard in many terminals, ``ESC [ 2 J``
clears the screen, a lone ``\\r`` or a bidi override makes a line read as something
else. When standard output is a terminal, the commands that print memory text (``get``,
``files read``, ``search``, the facts, ``diff``) print each such character as ``\\x1b``,
``\\r``, ``\\u202e``; piped or redirected, the text stays byte for byte what the file holds.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

# C0 controls but tab and newline, DEL, C1 controls, bidi embeddings, overrides and
# isolates; a '\r' right before a line end is a CRLF line ending and stays.
_UNSAFE = re.compile(r"\r(?!\n|$)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return repr(char)[1:-1] if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def for_terminal(text: str, stream: TextIO | None = None) -> str:
    """``text`` with its control characters made visible when ``stream`` (standard output
    by default) is a terminal; unchanged otherwise."""
    out = stream if stream is not None else sys.stdout
    isatty = getattr(out, "isatty", None)
    if not (callable(isatty) and isatty()):
        return text
    return _UNSAFE.sub(_escape, text)
