"""The English of the extraction heuristic: clauses, first-person statements, third person.

``clauses()`` splits a sentence where a new first-person subject starts ("I'm vegetarian
and I'm allergic to nuts", "My name is Alice and I work at ACME", "I prefer tea, and my
wife prefers coffee"), so that no fact carries half of another. ``plain_statement()``
reads the statements people make about themselves without any cue word:

=========================================  ================================================
said                                       stored
=========================================  ================================================
I'm / I am a(n) / the <role>               The user is a software engineer
I'm <durable state>                        The user is vegetarian / allergic to nuts /
                                           lactose intolerant / based in / from / learning X
I'm <Name>                                 The user's name is Carla
I (usually) <verb> ... (a durable verb:    The user works at ACME / lives in Berlin /
work, live, use, speak, have, own, ...)    has two kids / usually drinks tea
I don't / can't / never <verb> ...         The user doesn't eat pork
I'd rather ...                             The user would rather use Python than Go
my <relation> <verb>s ...                  The user's daughter plays the violin
(please) always / never <do something>     The user asks to always answer in German
we chose / picked / went with / use ...    We chose Vite for the frontend
=========================================  ================================================

``third_person()`` turns a first-person clause into a statement about "the user" (I work
-> the user works, my -> their). A fact that would still say I, me or my is dropped:
memory must never hold "The user's name is Alice and I work at ACME".

Not facts: passing states and actions ("I'm tired", "I'm going to the shop", "I need help",
"I have a question", "I have to leave"), and values that only point back at something said
before ("I like that idea", "I love it", "I prefer this one").
"""

from __future__ import annotations

import re

MAX_VALUE_WORDS = 40

_CLAUSE_BREAK = re.compile(
    r"(?:\s*;\s*|,?\s+(?:and|but|so|while|because|though|although)\s+|,\s+)"
    r"(?=(?:I|I'm|I've|I'd|I am|my|My|we|We|we're|We're)\b)"
)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself)\b", re.IGNORECASE)
_BARE_START = re.compile(
    r"^(?:it|its|it's|this|that|these|those|them|him|her|one|when|how|what|so|too|such)\b",
    re.IGNORECASE,
)
_ADVERBS = (
    r"(?:usually|always|often|mostly|mainly|normally|generally|really|also|still|currently|"
    r"sometimes|now)"
)
_DURABLE_VERBS = frozenset(
    """work live use speak write run own drink eat teach study play drive commute cook go
    take wake walk cycle ride swim volunteer manage lead maintain read practise practice
    train wear follow support""".split()  # noqa: SIM905
)
_PAST_VERBS = frozenset({"moved", "grew", "relocated", "emigrated"})
_NEGATABLE = frozenset("eat drink use smoke drive work like own speak".split())  # noqa: SIM905
_STATES = re.compile(
    r"^(?:vegetarian|vegan|pescatarian|diabetic|coeliac|celiac|colou?r-?blind|deaf|"
    r"left-handed|right-handed|married|single|divorced|retired|pregnant|"
    r"(?:lactose|gluten)[ -]intolerant|intolerant to .+|allergic to .+|"
    r"(?:originally )?from .+|based (?:in|out of) .+|\d{1,3} years old|"
    r"in the .+ time ?zone|learning .+|studying .+)$",
    re.IGNORECASE,
)
_NOT_ROLES = frozenset({"bit", "little", "tad", "lot", "one"})
_NOT_NAMES = frozenset(
    """OK Okay Sorry Back Done Here Ready Fine Good Great Sure Home Busy Afraid Not Just So
    Also Still Very Happy Glad Tired Hungry Late Almost""".split()  # noqa: SIM905
)
_NOT_HAD = re.compile(
    r"^(?:to\b|no\b|not\b|been\b|got to\b|a (?:question|problem|meeting|call|minute|moment|"
    r"doubt|feeling|suggestion|request|bug|thought|look|go|try|chance|break|point|"
    r"few questions|quick question)\b)",
    re.IGNORECASE,
)
_RELATIONS = (
    "wife|husband|partner|son|daughter|kids|children|child|sister|brother|mother|mom|mum|"
    "father|dad|parents|boss|manager|team|colleague|friend|dog|cat|family|girlfriend|"
    "boyfriend|grandmother|grandfather|baby"
)
_I_AM = re.compile(r"^I(?:'m| am)\s+(?P<rest>.+)$", re.IGNORECASE)
_I_RATHER = re.compile(r"^I(?:'d| would) rather\s+(?P<rest>.+)$", re.IGNORECASE)
_I_NOT = re.compile(
    rf"^I (?:{_ADVERBS} )?(?P<neg>don't|do not|never|can't|cannot|won't)\s+"
    r"(?P<verb>[a-z]+)\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_I_VERB = re.compile(rf"^I (?P<adverb>{_ADVERBS} )?(?P<verb>[a-z]+)(?P<rest>\s+.+)$", re.IGNORECASE)
_I_HAVE = re.compile(r"^I(?: have| have got|'ve got)\s+(?P<rest>.+)$", re.IGNORECASE)
_I_WAS_BORN = re.compile(r"^I was born\s+(?P<rest>.+)$", re.IGNORECASE)
_MY_RELATION_VERB = re.compile(
    rf"^my (?P<who>(?:\w+ )?(?:{_RELATIONS})) (?P<verb>[a-z]+s)\b(?P<rest>.*)$", re.IGNORECASE
)
_INSTRUCTION = re.compile(r"^(?:please\s+)?(?P<how>always|never)\s+(?P<rest>.+)$", re.IGNORECASE)
_WE_CHOSE = re.compile(
    r"^we(?:'ve| have|'re| are)?\s+(?:chose|chosen|picked|settled on|went with|going with)"
    r"\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_WE_ARE = re.compile(
    r"^we(?:'ve| have)?\s+(?:use|live|moved to|work|run|have)\s+(?P<rest>.+)$", re.IGNORECASE
)
_CUT = re.compile(
    r",\s*(?:so|but|because|which|as)\b.*$|\s+(?:from now on|please|thanks|thank you)\b.*$",
    re.IGNORECASE,
)
_NAME = re.compile(r"^(?P<name>[A-Z][a-z]+(?:[ -][A-Z][a-z]+)?)$")


def clauses(sentence: str) -> list[str]:
    """``sentence`` cut where a new first-person subject starts."""
    return [part.strip(" ,;") for part in _CLAUSE_BREAK.split(sentence) if part.strip(" ,;")]


def clean_value(value: str) -> str:
    """A value without trailing courtesy or reasons (", so no dairy please") and punctuation."""
    text = _CUT.sub("", value.strip()).strip().rstrip(".!;,").strip()
    words = text.split()
    return " ".join(words[:MAX_VALUE_WORDS])


_VERBISH = re.compile(
    r"\b(?:is|are|am|was|were|be|been|has|have|had|will|can|must|should|would|do|does|did|"
    r"\w+n't|\w{2,}(?<!')(?<!ss)s|\w+ed)\b",
    re.IGNORECASE,
)


def states_something(value: str) -> bool:
    """Whether ``value`` reads as a statement (it has a verb of some kind), not a bare
    phrase ("my manager" of "remember that my manager and I meet on Mondays")."""
    words = value.split()
    return len(words) >= 2 and bool(_VERBISH.search(" ".join(words[1:])))


def points_back(value: str) -> bool:
    """A value that only refers to something said before: it, this, that idea, when ..."""
    return not value or bool(_BARE_START.match(value))


def third_person(text: str) -> str:
    """The words of a first-person value, said of the user: my -> their, me -> them."""
    swaps = {"my": "their", "me": "them", "mine": "theirs", "myself": "themselves"}
    return re.sub(
        r"\b(my|me|mine|myself)\b", lambda m: _keep_case(m.group(1), swaps), text, flags=re.I
    )


def _keep_case(word: str, swaps: dict[str, str]) -> str:
    swapped = swaps[word.lower()]
    return swapped.capitalize() if word[0].isupper() else swapped


def third_person_verb(verb: str) -> str:
    """work -> works, go -> goes, study -> studies, have -> has."""
    lowered = verb.lower()
    if lowered in ("have", "'ve"):
        return "has"
    if lowered.endswith(("s", "sh", "ch", "x", "z", "o")):
        return lowered + "es"
    if len(lowered) > 2 and lowered.endswith("y") and lowered[-2] not in "aeiou":
        return lowered[:-1] + "ies"
    return lowered + "s"


def speaks_in_first_person(text: str) -> bool:
    """Whether ``text`` still says I, me or my (mixed person when it is about the user)."""
    return bool(_FIRST_PERSON.search(text))


def about_the_user(clause: str) -> str | None:
    """A first-person clause said of the user ("I work at ACME" -> "The user works at
    ACME"), or None when it is not a statement of that kind."""
    if match := _I_NOT.match(clause):
        verb = match["verb"].lower()
        if verb not in _NEGATABLE:
            return None
        neg = {"don't": "doesn't", "do not": "does not"}.get(match["neg"].lower(), match["neg"])
        return _said(f"The user {neg.lower()} {verb}", match["rest"])
    if match := _I_WAS_BORN.match(clause):
        return _said("The user was born", match["rest"])
    if match := _I_VERB.match(clause):
        verb = match["verb"].lower()
        adverb = (match["adverb"] or "").lower()
        if verb in _PAST_VERBS:
            return _said(f"The user {adverb}{verb}", match["rest"])
        if verb not in _DURABLE_VERBS:
            return None
        return _said(f"The user {adverb}{third_person_verb(verb)}", match["rest"])
    return None


def _said(head: str, rest: str) -> str | None:
    value = clean_value(rest)
    if points_back(value):
        return None
    return f"{head} {third_person(value)}"


def plain_statement(clause: str) -> tuple[str, str, int] | None:
    """(text, category, importance) of a plain statement (module table), or None."""
    text = clause.strip()
    if match := _I_RATHER.match(text):
        value = clean_value(match["rest"])
        return (
            None
            if points_back(value)
            else (f"The user would rather {third_person(value)}", "preference", 6)
        )
    if match := _I_AM.match(text):
        return _state(match["rest"])
    if match := _I_HAVE.match(text):
        value = clean_value(match["rest"])
        if points_back(value) or _NOT_HAD.match(value):
            return None
        return f"The user has {third_person(value)}", "fact", 6
    if match := _MY_RELATION_VERB.match(text):
        value = clean_value(match["rest"])
        if points_back(value):
            return None
        who, verb = match["who"].lower(), match["verb"].lower()
        return f"The user's {who} {verb} {third_person(value)}".rstrip(), "fact", 6
    if match := _INSTRUCTION.match(text):
        value = clean_value(match["rest"])
        if points_back(value):
            return None
        how = match["how"].lower()
        asks = "to always" if how == "always" else "never to"
        return f"The user asks {asks} {value[:1].lower()}{value[1:]}", "preference", 7
    for pattern, category in ((_WE_CHOSE, "decision"), (_WE_ARE, "fact")):
        if (match := pattern.match(text)) and not points_back(clean_value(match["rest"])):
            value = clean_value(text)
            return (value, category, 7) if len(value.split()) >= 3 else None
    found = about_the_user(text)
    return None if found is None else (found, "fact", 6)


def _state(rest: str) -> tuple[str, str, int] | None:
    """``I'm ...``: a role, a durable state or a name; None for a passing state."""
    value = clean_value(rest)
    if not value or points_back(value):
        return None
    words = value.split()
    if words[0].lower() in ("a", "an", "the") and len(words) > 1:
        if words[1].lower() in _NOT_ROLES:
            return None
        return f"The user is {third_person(value)}", "fact", 6
    if _STATES.match(value):
        return f"The user is {third_person(value)}", "fact", 6
    name = _NAME.match(value)
    if name and not any(part in _NOT_NAMES for part in re.split(r"[ -]", value)):
        return f"The user's name is {value}", "fact", 8
    return None
