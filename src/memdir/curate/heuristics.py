"""Curation without a model: what the user says about themselves becomes facts.

``heuristic_extract()`` reads only the *user's* messages, sentence by sentence, and
each sentence clause by clause (``statements.clauses``: "My name is Alice and I work at
ACME" is two statements). These cue patterns come first, case-insensitive, each
anchored at the start of a clause (an optional "please", "ok", "also" or "and" may come
first):

===================================  ======================================  ==========  ===
pattern                              stored text                             category    imp
===================================  ======================================  ==========  ===
remember (that) X, don't forget X    X, said of the user                     fact        7
call me X                            The user wants to be called X           preference  8
my name is X                         The user's name is X                    fact        8
my X is/are Y                        The user's X is/are Y                   fact        6
I prefer X                           The user prefers X                      preference  6
we decided / agreed (to) X           Decided: X                              decision    7
I (really) like/love/enjoy X         The user likes/loves/enjoys X           preference  5
I hate/dislike X, don't like X       The user dislikes X                     preference  5
===================================  ======================================  ==========  ===

then the plain statements of ``statements.plain_statement`` ("I'm vegetarian", "I work
at ACME", "I have two kids", "I don't eat pork", "my daughter plays the violin",
"always answer in German", "we chose Vite"). Every fact is said of the user, in the
third person ("remember that I take the 8:15 train" -> "The user takes the 8:15 train";
my -> their); one that would still say I, me or my is dropped, never stored half in
the first person.

"call me X" keeps X up to a comma or "from now on", "please", "thanks", "instead". Not
facts: questions (a sentence ending in "?" or opening with do, does, did, what, who,
where, when, why, how, which or whether; "can you remember that X?" is a request, not a
question), so "do you remember my name?" stores nothing; "my X is" with a
conversational X ("my question is", "my point is"); values that only point back at
something said before ("I like that idea", "I love it"); passing states ("I'm tired",
"I need help", "I have a question"); a value shorter than two characters. Each text is
capped at 300 characters; duplicates (compared normalised) are kept once.

The quality is lower than a model's: only what the user says of themselves is found,
nothing is inferred, and paraphrases ("the kids are Tom and Ann") are missed.
``summarise_extractively()`` is the matching no-model summary: it quotes the user's first
and last substantial messages instead of writing new prose. ``memdir bench curation``
measures both on statements written for it (docs/curation.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memdir.curate.guard import normalise_entry
from memdir.curate.statements import (
    about_the_user,
    clauses,
    plain_statement,
    points_back,
    speaks_in_first_person,
    states_something,
    third_person,
)
from memdir.llm import Message

SaveFact = Callable[[str, str | None, int | None], object]
"""The caller's way to store a durable fact: ``save_fact(text, category, importance)``."""

MAX_FACT_CHARS = 300

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD = (
    r"^(?:(?:please|ok(?:ay)?|also|and|so|oh|btw|by the way|from now on|hi|hello|hey|well)[,\s]+)*"
)
_LEAD_WORDS = re.compile(_LEAD, re.IGNORECASE)
_REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) you (?:please )?)(?:remember|note|keep in mind)\b", re.IGNORECASE
)
_NAME_END = re.compile(r",|\s+(?:from now on|please|thanks|thank you|instead)\b", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|what|who|whom|where|when|why|how|which|whether)\b", re.IGNORECASE
)
_CHATTY_SUBJECTS = frozenset(
    {"question", "point", "problem", "guess", "bad", "pleasure", "turn", "answer", "concern"}
)


@dataclass(frozen=True)
class HeuristicFact:
    """A fact found by the heuristics: its text, category and importance (1-10)."""

    text: str
    category: str
    importance: int


def _rule(pattern: str) -> re.Pattern[str]:
    return re.compile(_LEAD + pattern, re.IGNORECASE)


_REMEMBER = _rule(
    r"(?:(?:you should |you must |(?:can|could|would|will) you (?:please )?)?remember|"
    r"(?:don't|do not) forget)(?: that)?[,:]?\s+(.+)"
)
_CALL_ME = _rule(r"(?:you can |you may |just )?call me\s+(.+)")
_NAME = _rule(r"my name is\s+(.+)")
_MY_X = _rule(r"my ([\w' -]{1,40}?)\s+(is|are)\s+(.+)")
_PREFER = _rule(r"i(?: really| strongly| generally)? prefer\s+(.+)")
_DECIDED = _rule(r"we(?:'ve| have)? (?:decided|agreed)(?: to| that| on)?\s+(.+)")
_LIKE = _rule(r"i(?: really| absolutely)? (like|love|enjoy)\s+(.+)")
_DISLIKE = _rule(r"i(?: really)? (?:hate|dislike|don't like|do not like|can't stand)\s+(.+)")


def _clean(value: str) -> str:
    text = value.strip().rstrip(".!;,").strip()
    return text[:MAX_FACT_CHARS].rstrip()


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(_QUESTION_START.match(sentence.lstrip()))


_BARE_REFERENCES = frozenset(
    {"it", "this", "that", "them", "these", "those", "this one", "that one", "all that"}
)


def fact_from_sentence(sentence: str) -> HeuristicFact | None:
    """The first explicit fact a single sentence states, or None (see the module table)."""
    found = facts_from_sentence(sentence)
    return found[0] if found else None


def facts_from_sentence(sentence: str) -> list[HeuristicFact]:
    """The explicit facts of a sentence, one per clause that states one."""
    text = sentence.strip()
    if _REQUEST.match(text):
        text = text.rstrip("?").strip()  # "can you remember that X?" asks to remember X
    elif not text or _is_question(text):
        return []
    found = []
    for clause in clauses(text):
        fact = _match_clause(_LEAD_WORDS.sub("", clause))
        if fact is not None and len(fact.text) >= 2 and not speaks_in_first_person(fact.text):
            found.append(fact)
    return found


def _match_clause(text: str) -> HeuristicFact | None:
    found = _match_fact(text)
    if found is not None:
        return found
    plain = plain_statement(text)
    return None if plain is None else HeuristicFact(plain[0][:MAX_FACT_CHARS], plain[1], plain[2])


def _remembered(value: str) -> str | None:
    """What "remember (that) X" asks to keep, said of the user."""
    if value.lower().rstrip(".!") in _BARE_REFERENCES or points_back(value):
        return None  # "remember it" points back at something; alone it states nothing
    if re.match(r"^I\b", value):
        return about_the_user(value) or plain_fact_text(value)
    if not states_something(value):
        return None  # a phrase cut off ("my manager" of "my manager and I meet ...")
    if re.match(r"^my\b", value, re.IGNORECASE):
        value = "The user's" + value[2:]
    return third_person(value[:1].upper() + value[1:])


def plain_fact_text(value: str) -> str | None:
    plain = plain_statement(value)
    return None if plain is None else plain[0]


def _match_fact(text: str) -> HeuristicFact | None:
    if match := _REMEMBER.match(text):
        remembered = _remembered(_clean(match.group(1)))
        return None if remembered is None else HeuristicFact(remembered, "fact", 7)
    if match := _CALL_ME.match(text):
        name = _clean(_NAME_END.split(match.group(1))[0])
        return HeuristicFact(f"The user wants to be called {name}", "preference", 8)
    if match := _NAME.match(text):
        return HeuristicFact(f"The user's name is {_clean(match.group(1))}", "fact", 8)
    if (match := _MY_X.match(text)) and match.group(1).strip().lower() not in _CHATTY_SUBJECTS:
        subject, verb, value = match.group(1).strip(), match.group(2).lower(), match.group(3)
        return HeuristicFact(
            f"The user's {subject} {verb} {third_person(_clean(value))}", "fact", 6
        )
    if match := _PREFER.match(text):
        return _stance("The user prefers", match.group(1), "preference", 6)
    if match := _DECIDED.match(text):
        return HeuristicFact(f"Decided: {third_person(_clean(match.group(1)))}", "decision", 7)
    if match := _DISLIKE.match(text):
        return _stance("The user dislikes", match.group(1), "preference", 5)
    if match := _LIKE.match(text):
        return _stance(f"The user {match.group(1).lower()}s", match.group(2), "preference", 5)
    return None


def _stance(head: str, value: str, category: str, importance: int) -> HeuristicFact | None:
    cleaned = _clean(value)
    if points_back(cleaned):
        return None  # "I like that idea", "I love it": a reaction, not a preference
    return HeuristicFact(f"{head} {third_person(cleaned)}", category, importance)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` at sentence ends and line breaks."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def heuristic_extract(messages: Sequence[Message]) -> list[HeuristicFact]:
    """The explicit facts stated in the user's messages, in order, without duplicates."""
    facts: list[HeuristicFact] = []
    seen: set[str] = set()
    for message in messages:
        if message.role != "user":
            continue
        for sentence in split_sentences(message.content):
            for fact in facts_from_sentence(sentence):
                key = normalise_entry(fact.text)
                if key not in seen:
                    seen.add(key)
                    facts.append(fact)
    return facts


def summarise_extractively(messages: Sequence[Message], limit: int = 200) -> str:
    """A one-line summary quoting the first and last substantial user messages."""
    said = [m.content.strip() for m in messages if m.role == "user" and len(m.content.strip()) > 3]
    if not said:
        return ""
    first = _shorten(said[0], limit)
    if len(said) == 1:
        return f'The user asked: "{first}"'
    return f'The user began with "{first}" and ended with "{_shorten(said[-1], limit)}"'


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."
