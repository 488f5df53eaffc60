"""How two statements of a fact are compared: one person, no opening cue, near-duplicates.

* ``in_first_person()`` reads every statement about the user in the first person, the
  way the user says them ("The user's manager is Carla" -> "my manager is Carla", "The
  user lives in Paris" -> "I lives in Paris"; verbs lose their ``s`` later), so a fact
  extracted in the third person and one saved as said are compared like for like.
* ``strip_opening_cue()`` takes off an opening that announces a change ("Actually,",
  "Correction:", "From now on", "Starting Monday,", "These days") and says it was there.
* ``near_duplicate()``: two phrasings of one fact. Their content words (no function
  words; numbers, identifiers and names kept) are the same in the same order, or one
  text's words are the other's with one or two more, inserted after at least two words
  they share at the start ("We chose PostgreSQL for billing" / "... for the billing
  service"; "My manager is Carla" / "... Carla Diaz"). The numbers of the shorter must
  all be in the longer, and neither may deny what the other says (not, no, never).
  Words inserted before the second shared word are another subject ("Sam works at Acme"
  / "Sam's sister works at Acme"), not a fuller statement. A leading label ("Decided:",
  "Note:") is no word of the statement.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[a-z0-9]+(?:[-.@][a-z0-9]+)*(?:'[a-z]+)?")
MAX_EXTRA_WORDS = 2
MIN_SHARED_PREFIX = 2

_THE_USER = (
    (re.compile(r"\bthe user's\b", re.IGNORECASE), "my"),
    (re.compile(r"\bthe user (?:is)\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bthe user (?:has)\b", re.IGNORECASE), "I have"),
    (re.compile(r"\bthe user\b", re.IGNORECASE), "I"),
    (re.compile(r"\bI'm\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bI've\b", re.IGNORECASE), "I have"),
)
_OPENING_CUE = re.compile(
    r"^(?:actually|correction|update|nowadays|these days|from now on|going forward|"
    r"(?:starting|beginning|as of|since|effective)(?: from)? [^,:]{1,40})\s*[,:]?\s+",
    re.IGNORECASE,
)
_FUNCTION = frozenset(
    """a an the my our your his her their its this that these those of to and or as s i we
    you he she it they me us him them is are was were be been being am has have had do does
    did will would shall should can could may might must on in at for with by from into onto
    over under about after before since until than then there here which who whom whose what
    when where how""".split()  # noqa: SIM905
)
_NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor"})
_LABEL = re.compile(
    r"^\s*(?:decided|decision|note|todo|fyi|remember|reminder|preference|fact)\s*:\s*",
    re.IGNORECASE,
)


def in_first_person(text: str) -> str:
    """``text`` with "the user" read as "I" and "the user's" as "my" (module docstring)."""
    for pattern, replacement in _THE_USER:
        text = pattern.sub(replacement, text)
    return text


def strip_opening_cue(text: str) -> tuple[str, bool]:
    """``text`` without an opening that announces a change, and whether it had one."""
    stripped = _OPENING_CUE.sub("", text.strip(), count=1)
    return stripped, stripped != text.strip()


def _base(word: str) -> str:
    word = word.removesuffix("'s")
    if word.endswith("n't"):
        return "not"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and word.isalpha():
        return word[:-1]
    return word


def content_sequence(text: str) -> list[str]:
    """The content words of ``text`` in order: lower case, no plural ``s``, no function
    words; numbers and identifiers kept."""
    words = [_base(w) for w in WORD.findall(in_first_person(_LABEL.sub("", text)).lower())]
    return [w for w in words if w not in _FUNCTION]


def _is_number(word: str) -> bool:
    return any(c.isdigit() for c in word)


def _subsequence_extra(short: list[str], long: list[str]) -> tuple[int, int] | None:
    """(shared words before the first inserted one, inserted words) when ``short`` is
    ``long`` with words left out; None when it is not."""
    position = 0
    first_gap: int | None = None
    for index, word in enumerate(long):
        if position < len(short) and short[position] == word:
            position += 1
        elif first_gap is None:
            first_gap = index
    if position < len(short):
        return None
    extra = len(long) - len(short)
    return (len(long) if first_gap is None else first_gap), extra


def near_duplicate(old: str, new: str) -> str | None:
    """``"same"`` when ``new`` says what ``old`` says, ``"fuller"`` when it says it with a
    word or two more, ``"shorter"`` when with a word or two less; None otherwise."""
    a, b = content_sequence(old), content_sequence(new)
    if not a or not b or (_NEGATIONS & set(a)) != (_NEGATIONS & set(b)):
        return None
    if a == b:
        return "same"
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    found = _subsequence_extra(short, long)
    if found is None:
        return None
    prefix, extra = found
    if not 0 < extra <= MAX_EXTRA_WORDS or prefix < min(MIN_SHARED_PREFIX, len(short)):
        return None
    if not {w for w in short if _is_number(w)} <= {w for w in long if _is_number(w)}:
        return None
    return "fuller" if long is b else "shorter"
