"""Attributed lines: who (or what) a block is about, read from its leading label.

Memory notes attribute lines with a label: a transcript bullet ``- Alice: ...``,
a session-end note ``- **user**: ...``, a learning ``- **Error**: ...``. When a
query names one of the labels its candidate blocks carry ("what did Alice say
about ..."), the lines carrying *another* label are mostly noise: in two-party
conversations 96% of the evidence for a question that names one speaker is in
that speaker's own turns (LoCoMo, docs/benchmarks.md). Full-text ranking cannot
see this (a name on half of the lines has an idf of ~0) and an embedding sees it
only faintly, so search demotes such blocks by a bounded factor after fusion.

Only *recurring* labels count: a label carried by at least ``MIN_LABEL_LINES``
candidate blocks is a speaker, a role or an entry type; a one-off key such as
``- Database: PostgreSQL 16`` beside ``- Cache: Redis`` is content, and a query
about the cache must not demote the database line. Demoted blocks keep their
place as the source of what their neighbours inherit (a question asked by one
speaker still lifts the answer of the other), and unlabelled blocks and chunks
are never touched. Nothing changes unless the query names a recurring label.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from memdir.store.contracts import Unit

MAX_LABEL_WORDS = 3
"""Longer prefixes before a colon are sentences, not labels."""

LABEL_SCAN_CHARS = 64
"""A label and its colon start within this many characters (indent, marker, bold, 48)."""

MIN_LABEL_LINES = 2
"""A label on fewer candidate blocks is a key of its line, not an attribution."""

_LABEL = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?"  # an optional list marker
    r"(?:\*\*|__)?"  # optional bold
    r"([^\s:*_`\[\]()#<>][^:*_`\[\]()#<>\n]{0,47}?)"  # the label itself
    r"(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]"  # the colon (inside or outside the bold)
)
_WORD = re.compile(r"\w+", re.UNICODE)

Label = tuple[str, ...]


class Scored(Protocol):
    """What attribution reads and changes on a search candidate."""

    unit: Unit
    relevance: float
    breakdown: dict[str, float]


def line_label(text: str) -> Label | None:
    """The lower-cased words of the label that opens ``text``, or ``None``.

    ``- Alice: hi`` -> ``("alice",)``; ``- **user**: hi`` -> ``("user",)``;
    a URL (``http://``), a time (``10:30``) or a long clause before a colon is no label.
    """
    if ":" not in text[:LABEL_SCAN_CHARS]:
        return None  # most lines: no regular expression needed
    match = _LABEL.match(text)
    if match is None:
        return None
    words = tuple(w.lower() for w in _WORD.findall(match[1]))
    return words if 0 < len(words) <= MAX_LABEL_WORDS else None


def named_labels(query: str, labels: Iterable[Label]) -> set[Label]:
    """The labels all of whose words occur in ``query``."""
    words = {w.lower() for w in _WORD.findall(query)}
    return {label for label in labels if words.issuperset(label)}


def apply_attribution(query: str, candidates: Iterable[Scored], demote: float) -> None:
    """Scale by ``1 - demote`` the blocks with a recurring label other than the query names.

    The factor goes into each touched candidate's breakdown as ``attribution``.
    """
    if demote <= 0.0:
        return
    labelled = [(c, line_label(c.unit.text)) for c in candidates if c.unit.kind == "block"]
    counts = Counter(label for _, label in labelled if label is not None)
    recurring = {label for label, lines in counts.items() if lines >= MIN_LABEL_LINES}
    named = named_labels(query, recurring)
    if not named:
        return
    factor = 1.0 - demote
    for candidate, label in labelled:
        if label in recurring and label not in named:
            candidate.relevance *= factor
            candidate.breakdown["attribution"] = factor
