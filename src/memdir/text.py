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


# Look-alike letters (Cyrillic, Greek, Latin small capitals) and brackets, slashes and
# dashes that NFKC leaves as they are, mapped to the ASCII they pass for. A short table of
# our own: it covers the letters of memdir's fence tags and bootstrap file names, which is
# what ``skeleton`` guards; a general confusables library would be a dependency for that.
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏкмтвнпгАЕОРСУХІЈЅКМТВН"  # Cyrillic
    "αεοριυνκτχΑΕΟΡΙΥΝΚΤΧΜΗΒΖ"  # Greek
    "ᴀᴇᴏʀʏꜰɪʟɴᴛꜱᴜᴄᴋᴍ"  # Latin small capitals
    # brackets, slashes, dashes
    "\u2039\u3008\u27e8\u02c2\u1438\u276e\u203a\u3009"
    "\u27e9\u02c3\u1433\u276f\u2044\u2215\u29f8\u2010"
    "\u2011\u2012\u2013\u2014\u2015\u2212\ufe63",
    "aeopcyxijsdhlkmtbhnrAEOPCYXIJSKMTBH"
    "aeopiuvktxAEOPIYNKTXMHBZ"
    "aeoryfilntsuckm"
    "<<<<<<>>>>>>///--------",
)


def skeleton(text: str) -> tuple[str, list[int]]:
    """``text`` as it reads: NFKC-folded, lowercased, look-alike letters and signs made
    ASCII (``_LOOKALIKES``), invisible format characters (zero-width spaces, joiners,
    direction marks) dropped; and, for each character of the result, the index of the
    character of ``text`` it came from."""
    import unicodedata

    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if unicodedata.category(char) == "Cf":
            continue
        for folded in unicodedata.normalize("NFKC", char).translate(_LOOKALIKES).lower():
            chars.append(folded.translate(_LOOKALIKES))
            origin.append(index)
    return "".join(chars), origin
