"""memdir's own markup inside notes: the hidden ``<!-- memdir:... -->`` markers.

A saved, forgotten or reinforced fact is a bullet of a daily note that ends in an
HTML comment such as ``<!-- memdir:fact id=f-ab12cd34ef cat=fact imp=5 at=... -->``
(``memdir.facts.markers`` writes and parses them). Markdown viewers hide the comment;
everything that shows a note's text to an agent or a person (search hits, the index
that ranks them) must hide it too, while line numbers stay those of the file.
"""

from __future__ import annotations

import re

MARKER = re.compile(r"[ \t]*<!--\s*memdir:[a-z]+\b[^>]*?-->")
"""One memdir marker with the blanks before it."""


def strip_markers(line: str) -> str:
    """``line`` without memdir's markers (other HTML comments are the author's and stay)."""
    if "memdir:" not in line:
        return line
    return MARKER.sub("", line)
