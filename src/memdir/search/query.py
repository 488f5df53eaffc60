"""Turn any user text into the keyword query a store ranks: the words worth searching for.

A ``KeywordQuery`` has no syntax, so operators (``AND``, ``OR``, ``NOT``, ``NEAR``),
column filters (``:``), stars, carets, quotes and parentheses in the text are
searched as plain words and can never break a query. Stop words are dropped
(unless nothing else is left), terms are de-duplicated and capped; the store ranks
by BM25 over any of them, so units that match more and rarer terms come first.
"""

from __future__ import annotations

import re

from memdir.store.contracts import KeywordQuery

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERM_CHARS = 64

_STOP_TEXT = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m o re ve y"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


def extract_terms(text: str, max_terms: int = 24) -> list[str]:
    """The distinct lower-cased words of ``text`` worth searching for, in order."""
    words = [w.lower()[:MAX_TERM_CHARS] for w in _WORD.findall(text)]
    words = [w for w in words if w.strip("_")]
    content = [w for w in words if w not in STOP_WORDS]
    chosen = content or words
    return list(dict.fromkeys(chosen))[:max_terms]


_NAME = re.compile(r"[^\W\d_][\w'\u2019-]*", re.UNICODE)


def named_terms(text: str, limit: int = 8) -> list[str]:
    """The words a question names something by: capitalised words past the first (which
    any sentence capitalises), stop words aside, lower-cased, a possessive ``'s`` dropped."""
    words = _NAME.findall(text)
    names = []
    for word in words[1:]:
        if not word[0].isupper():
            continue
        base = re.split(r"['\u2019]", word)[0].lower()
        if base and base not in STOP_WORDS and base not in names:
            names.append(base)
    return names[:limit]


def keyword_query(text: str, max_terms: int = 24) -> KeywordQuery:
    """The query's words worth searching for (an empty query when it has none)."""
    return KeywordQuery(terms=tuple(extract_terms(text, max_terms)))
