"""Translate the FTS5 MATCH expressions of ``search/`` into PostgreSQL text queries.

``search/`` builds expressions such as ``"sqlite" OR "vector search"``: double-quoted
strings (inner quotes doubled) joined by ``OR``, ``AND``, ``NOT`` or juxtaposition.
:func:`parse_expression` reads that language into clauses (an OR of ANDs of
possibly negated phrases); parentheses, ``NEAR`` and column filters are read as
plain words, and a ``*`` prefix marker is dropped. An unbalanced quote is an
``InvalidInputError``, as in FTS5.

* ``porter`` (the ``english`` config): the clauses become a ``websearch_to_tsquery``
  string, which PostgreSQL parses without ever failing on user text;
* ``trigram``: each phrase becomes the AND of its 3-character substrings, written as
  a ``tsquery`` literal with every lexeme quoted. Phrases shorter than 3 characters
  match nothing, as with FTS5's trigram tokenizer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memdir.errors import InvalidInputError

_TOKEN = re.compile(r'"((?:[^"]|"")*)"|(\S+)')
_OPERATORS = {"OR", "AND", "NOT"}


@dataclass(frozen=True)
class Phrase:
    text: str
    negated: bool = False


Clause = tuple[Phrase, ...]


def parse_expression(expression: str) -> list[Clause]:
    """An FTS5 expression as an OR of clauses, each an AND of phrases."""
    if expression.count('"') % 2:
        raise InvalidInputError(
            f"invalid full-text query {expression!r} (unbalanced double quote); "
            "quote user text as FTS5 phrases"
        )
    clauses: list[Clause] = []
    current: list[Phrase] = []
    negate = False
    for match in _TOKEN.finditer(expression):
        quoted, bare = match.group(1), match.group(2)
        if quoted is None and bare in _OPERATORS:
            if bare == "OR" and current:
                clauses.append(tuple(current))
                current = []
            negate = bare == "NOT"
            continue
        text = quoted.replace('""', '"') if quoted is not None else bare.strip("()*^")
        if text.strip():
            current.append(Phrase(text, negated=negate))
        negate = False
    if current:
        clauses.append(tuple(current))
    return [c for c in clauses if any(not p.negated for p in c)]


def websearch_text(clauses: list[Clause]) -> str:
    """The clauses as input for ``websearch_to_tsquery``."""

    def phrase(p: Phrase) -> str:
        words = p.text.replace('"', " ").replace("-", " ").split()
        body = '"' + " ".join(words) + '"'
        return ("-" if p.negated else "") + body

    return " or ".join(" ".join(phrase(p) for p in clause) for clause in clauses)


def trigrams(text: str) -> list[str]:
    """The distinct 3-character substrings of the lower-cased ``text``, in order."""
    low = text.lower()
    return list(dict.fromkeys(low[i : i + 3] for i in range(len(low) - 2)))


def _lexeme(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def trigram_tsquery(clauses: list[Clause]) -> str:
    """The clauses as a ``tsquery`` literal over trigram lexemes ('' when nothing is left)."""
    parts = []
    for clause in clauses:
        terms: list[str] = []
        for p in clause:
            grams = trigrams(p.text)
            if not grams:
                if p.negated:
                    continue
                terms = []  # a short positive phrase matches nothing: so does its clause
                break
            body = "(" + " & ".join(_lexeme(g) for g in grams) + ")"
            terms.append(("!" if p.negated else "") + body)
        if any(not t.startswith("!") for t in terms):
            parts.append("(" + " & ".join(terms) + ")")
    return " | ".join(parts)
